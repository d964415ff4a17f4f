package console

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
	if verb == "SHOW" {
		if arg == "" {
			s.invalid(q)
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
	switch verb {
	case "PAUSE":
		if err := src.Pause(arg); err != nil {
			s.fail("08P01", err.Error())
			return
		}
		if s.waitPaused(arg) && src.Disconnect != nil {
			src.Disconnect(arg) // as PgBouncer: ready for a restart of the database
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
		s.waitClosed(arg)
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
	if s.role != Admin {
		s.fail("08P01", "admin access needed")
		return
	}
	m := setCommand.FindStringSubmatch(q)
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

// waitPaused returns true when the pools of database ("" all) have no
// server connection handed out, as PgBouncer's PAUSE does, and false when
// a RESUME came first (a pool this PAUSE paused is no longer paused: its
// servers are in use again and must not be closed) or the console ends.
// A pool made since (another user's) is not waited for: PAUSE did not
// pause it.
func (s *session) waitPaused(database string) bool {
	t := time.NewTicker(pauseWait)
	defer t.Stop()
	ours := map[[2]string]bool{}
	for _, p := range s.c.Source.Pools() {
		if (database == "" || p.Database == database) && p.Paused {
			ours[[2]string{p.Database, p.User}] = true
		}
	}
	for {
		busy := false
		for _, p := range s.c.Source.Pools() {
			if !ours[[2]string{p.Database, p.User}] {
				continue
			}
			if !p.Paused {
				return false
			}
			if p.ServersActive > 0 {
				busy = true
			}
		}
		if !busy {
			return s.ctx.Err() == nil
		}
		select {
		case <-s.ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// waitClosed returns when no server connection of database ("" any)
// waits to be closed after a RECONNECT, as PgBouncer's WAIT_CLOSE, or
// when the console ends.
func (s *session) waitClosed(database string) {
	t := time.NewTicker(pauseWait)
	defer t.Stop()
	for {
		pending := false
		for _, sv := range s.c.Source.Servers() {
			if (database == "" || sv.Database == database) && sv.CloseNeeded {
				pending = true
			}
		}
		if !pending {
			return
		}
		select {
		case <-s.ctx.Done():
			return
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
