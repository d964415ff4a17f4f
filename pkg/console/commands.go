package console

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// session is one console client's command loop state.
type session struct {
	c    *Console
	ctx  context.Context
	role Role
	out  *pgproto3.Backend
	// shutdown is set by SHUTDOWN: Serve answers, then shuts down.
	shutdown bool
	// lastRequest is when the client's last message came (UnixNano), for
	// SHOW CLIENTS' request_time.
	lastRequest atomic.Int64
	// waitMu guards cancelled: while PAUSE or WAIT_CLOSE waits, a channel
	// that Console.Cancel closes (nil otherwise).
	waitMu    sync.Mutex
	cancelled chan struct{}
}

// fakeParams are the session settings PgBouncer's console pretends to
// have (admin.c fake_param_list), with its values: client libraries SET
// and SHOW them on their own (libpq's PQsetClientEncoding, old psycopg2's
// SHOW default_transaction_isolation), for any console user.
var fakeParams = map[string]string{
	"client_encoding":               "UTF-8",
	"default_transaction_isolation": "read committed",
	"standard_conforming_strings":   "on",
	"datestyle":                     "ISO",
	"timezone":                      "GMT",
}

// command is PgBouncer's console grammar: a word, an optional argument,
// an optional semicolon. One command per query string, as PgBouncer.
var command = regexp.MustCompile(`^\s*(\w+)(?:\s+("(?:[^"]|"")*"|[^\s;]+))?\s*;?\s*$`)

// setCommand is PgBouncer's SET key = value (or TO value): the value a
// 'quoted' string or one word.
var setCommand = regexp.MustCompile(`(?is)^\s*SET\s+(\w+)\s*(?:=|\s+TO\s+)\s*('(?:[^']|'')*'|[^\s;']+)\s*;?\s*$`)

// pauseWait is how often PAUSE looks whether the paused pools' servers
// came back.
const pauseWait = 20 * time.Millisecond

// run answers one Query message (without its ReadyForQuery).
func (s *session) run(q string) {
	if strings.TrimSpace(strings.TrimRight(strings.TrimSpace(q), ";")) == "" {
		s.out.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	if f := strings.Fields(q); strings.EqualFold(f[0], "SET") {
		s.set(q)
		return
	}
	m := command.FindStringSubmatch(q)
	if m == nil {
		s.invalid(q)
		return
	}
	verb, arg := strings.ToUpper(m[1]), unquote(m[2])
	if verb == "SHOW" || verb == "SELECT" { // PgBouncer's SELECT x is SHOW x
		if arg == "" {
			s.invalid(q)
			return
		}
		if v, ok := fakeParams[strings.ToLower(arg)]; ok {
			s.table([]column{{strings.ToLower(arg), typText}}, [][]any{{v}})
			return
		}
		s.show(q, strings.ToUpper(arg))
		return
	}
	if s.role != Admin {
		s.fail("08P01", "admin access needed")
		return
	}
	src := s.c.Source
	if arg != "" && arg == s.c.Database {
		// PgBouncer's refusals (admin.c), its words: ENABLE says disable.
		msg := map[string]string{"DISABLE": "cannot disable", "ENABLE": "cannot disable", "PAUSE": "cannot pause",
			"KILL": "cannot kill", "RECONNECT": "cannot reconnect", "WAIT_CLOSE": "cannot wait in"}[verb]
		if msg != "" {
			s.fail("08P01", msg+" admin db: "+arg)
			return
		}
	}
	switch verb {
	case "PAUSE":
		cancelled := s.beginWait() // before the pause: a cancel from now on undoes it
		defer s.endWait()
		undo := func() error { return src.Resume(arg) }
		if src.PauseUndoable != nil {
			u, err := src.PauseUndoable(arg)
			if err != nil {
				s.fail("08P01", err.Error())
				return
			}
			undo = func() error { u(); return nil }
		} else if err := src.Pause(arg); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		switch s.waitPaused(arg, cancelled) {
		case waitDone:
			if src.Disconnect != nil {
				src.Disconnect(arg) // as PgBouncer: ready for a restart of the database
			}
		case waitCancelled:
			// ^C: resume what this PAUSE paused, as PgBouncer resumes
			// the pooler on a console client's cancel.
			if err := undo(); err != nil {
				s.c.logger().Debug("console: resume after a cancelled PAUSE", "err", err)
			}
			s.fail("57014", "canceling statement due to user request (PAUSE cancelled: resumed)")
			return
		}
		s.complete("PAUSE")
	case "RESUME":
		if err := src.Resume(arg); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		s.complete("RESUME")
	case "DISABLE", "ENABLE", "KILL":
		if arg == "" {
			s.fail("08P01", "a database is required")
			return
		}
		f := map[string]func(string) error{"DISABLE": src.Disable, "ENABLE": src.Enable, "KILL": src.Kill}[verb]
		if err := f(arg); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		s.complete(verb)
	case "RECONNECT":
		if err := src.Reconnect(arg); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		s.complete("RECONNECT")
	case "WAIT_CLOSE":
		cancelled := s.beginWait()
		defer s.endWait()
		if !s.waitClosed(arg, cancelled) {
			s.fail("57014", "canceling statement due to user request")
			return
		}
		s.complete("WAIT_CLOSE")
	case "RELOAD":
		if arg != "" {
			s.invalid(q)
			return
		}
		if err := src.Reload(); err != nil {
			s.fail("08P01", "reload failed: "+err.Error())
			return
		}
		s.complete("RELOAD")
	case "SHUTDOWN":
		if arg != "" {
			s.invalid(q)
			return
		}
		s.complete("SHUTDOWN")
		s.shutdown = true // after the ReadyForQuery goes out
	case "KILL_CLIENT":
		id, ok := parseClientID(arg)
		if !ok {
			s.fail("08P01", fmt.Sprintf("KILL_CLIENT needs a client's id: its ptr in SHOW CLIENTS (0x...) or that number in decimal, not %q", arg))
			return
		}
		if err := src.KillClient(id); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		s.complete("KILL_CLIENT")
	case "SUSPEND":
		s.fail("0A000", fmt.Sprintf("%s is not supported by qprouter's console (supported: SHOW, SET, PAUSE, RESUME, KILL, KILL_CLIENT, DISABLE, ENABLE, RECONNECT, WAIT_CLOSE, RELOAD, SHUTDOWN)", verb))
	default:
		s.invalid(q)
	}
}

// set runs SET key = value: a setting changed in place until the next
// RELOAD rereads the config file (Source.Set).
func (s *session) set(q string) {
	m := setCommand.FindStringSubmatch(q)
	if m != nil {
		if _, ok := fakeParams[strings.ToLower(m[1])]; ok {
			// as PgBouncer, for any console user
			s.out.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: "SET ignored"})
			s.complete("SET")
			return
		}
	}
	if s.role != Admin {
		s.fail("08P01", "admin access needed")
		return
	}
	if m == nil {
		s.invalid(q)
		return
	}
	key, value := strings.ToLower(m[1]), m[2]
	if len(value) >= 2 && value[0] == '\'' {
		value = strings.ReplaceAll(value[1:len(value)-1], "''", "'")
	}
	if err := s.c.Source.Set(key, value); err != nil {
		s.fail("08P01", "SET "+key+": "+err.Error())
		return
	}
	s.complete("SET")
}

// waitEnd is how a PAUSE's wait ended.
type waitEnd int

const (
	waitDone      waitEnd = iota // the paused pools' servers are all back
	waitOvertaken                // a RESUME came first, or the console ends
	waitCancelled                // a cancel request (Console.Cancel)
)

// beginWait starts a wait that Console.Cancel may end: the channel it
// returns is closed by a cancel until endWait.
func (s *session) beginWait() <-chan struct{} {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	s.cancelled = make(chan struct{})
	return s.cancelled
}

func (s *session) endWait() {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	s.cancelled = nil
}

// cancelWait ends the wait under way, if any.
func (s *session) cancelWait() bool {
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	if s.cancelled == nil {
		return false
	}
	close(s.cancelled)
	s.cancelled = nil
	return true
}

// waitPaused returns waitDone when the pools of database ("" all) have no
// server connection handed out, as PgBouncer's PAUSE does, waitOvertaken
// when a RESUME came first (a pool this PAUSE paused is no longer paused:
// its servers are in use again and must not be closed) or the console
// ends, and waitCancelled when cancelled is closed first. A pool made
// since (another user's) is not waited for: PAUSE did not pause it.
func (s *session) waitPaused(database string, cancelled <-chan struct{}) waitEnd {
	t := time.NewTicker(pauseWait)
	defer t.Stop()
	ours := map[[2]string]bool{}
	for _, p := range s.c.Source.Pools() {
		if (database == "" || p.Database == database) && p.Paused {
			ours[[2]string{p.Database, p.User}] = true
		}
	}
	for {
		select {
		case <-cancelled:
			return waitCancelled
		default:
		}
		busy := false
		for _, p := range s.c.Source.Pools() {
			if !ours[[2]string{p.Database, p.User}] {
				continue
			}
			if !p.Paused {
				return waitOvertaken
			}
			if p.ServersActive > 0 {
				busy = true
			}
		}
		if !busy {
			if s.ctx.Err() != nil {
				return waitOvertaken
			}
			return waitDone
		}
		select {
		case <-s.ctx.Done():
			return waitOvertaken
		case <-cancelled:
			return waitCancelled
		case <-t.C:
		}
	}
}

// waitClosed returns when no server connection of database ("" any)
// waits to be closed after a RECONNECT, as PgBouncer's WAIT_CLOSE, or
// when the console ends; false when cancelled is closed first.
func (s *session) waitClosed(database string, cancelled <-chan struct{}) bool {
	t := time.NewTicker(pauseWait)
	defer t.Stop()
	for {
		select {
		case <-cancelled:
			return false
		default:
		}
		pending := false
		for _, sv := range s.c.Source.Servers() {
			if (database == "" || sv.Database == database) && sv.CloseNeeded {
				pending = true
			}
		}
		if !pending {
			return true
		}
		select {
		case <-s.ctx.Done():
			return true
		case <-cancelled:
			return false
		case <-t.C:
		}
	}
}

// parseClientID reads KILL_CLIENT's argument: SHOW CLIENTS' ptr
// ("0x" and hex digits) or the same number in decimal (PgBouncer 1.24's
// id column, which 1.18's columns do not have).
func parseClientID(a string) (uint32, bool) {
	base, digits := 10, a
	if len(a) > 2 && (a[:2] == "0x" || a[:2] == "0X") {
		base, digits = 16, a[2:]
	}
	n, err := strconv.ParseUint(digits, base, 32)
	return uint32(n), err == nil && n != 0
}

// unquote takes the quotes off a "quoted" argument.
func unquote(a string) string {
	if len(a) >= 2 && a[0] == '"' && a[len(a)-1] == '"' {
		return strings.ReplaceAll(a[1:len(a)-1], `""`, `"`)
	}
	return a
}

func (s *session) invalid(q string) {
	s.fail("08P01", fmt.Sprintf("invalid command '%s', use SHOW HELP;", q))
}

func (s *session) fail(code, msg string) {
	s.out.Send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: code, Message: msg})
}

func (s *session) complete(tag string) {
	s.out.Send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
}
