package console

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// PostgreSQL type OIDs of PgBouncer's console columns.
const (
	typText    = 25
	typInt4    = 23
	typNumeric = 1700
)

type column struct {
	name string
	oid  uint32
}

// null is a value not known (sent as SQL NULL).
type null struct{}

// help is SHOW HELP's notice detail: the commands qprouter's console runs.
const help = `
	SHOW HELP|CONFIG|DATABASES|POOLS|CLIENTS|SERVERS|USERS|VERSION
	SHOW LISTS|STATS|STATS_TOTALS|STATS_AVERAGES|TOTALS|STATE
	SET key = arg
	PAUSE [<db>]
	RESUME [<db>]
	KILL <db>
	KILL_CLIENT <id>
	DISABLE <db>
	ENABLE <db>
	RECONNECT [<db>]
	WAIT_CLOSE [<db>]
	RELOAD
	SHUTDOWN`

// show answers SHOW item.
func (s *session) show(q, item string) {
	src := s.c.Source
	switch item {
	case "HELP":
		s.out.Send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: "Console usage", Detail: help})
		s.complete("SHOW")
	case "VERSION":
		s.table([]column{{"version", typText}}, [][]any{{s.c.Version}})
	case "POOLS":
		s.table(poolColumns, poolRows(src.Pools()))
	case "CLIENTS":
		s.table(socketColumns, clientRows(src.Clients()))
	case "SERVERS":
		s.table(socketColumns, serverRows(src.Servers()))
	case "DATABASES":
		s.table(databaseColumns, databaseRows(src.Databases()))
	case "USERS":
		var rows [][]any
		for _, u := range src.Users() {
			rows = append(rows, []any{u.Name, u.PoolMode})
		}
		s.table([]column{{"name", typText}, {"pool_mode", typText}}, rows)
	case "CONFIG":
		var rows [][]any
		for _, c := range src.Config() {
			rows = append(rows, []any{c.Key, c.Value, c.Default, yesNo(c.Changeable)})
		}
		s.table([]column{{"key", typText}, {"value", typText}, {"default", typText}, {"changeable", typText}}, rows)
	case "LISTS":
		s.table([]column{{"list", typText}, {"items", typInt4}}, s.lists())
	case "STATS":
		s.table(statsColumns, statsRows(src.Stats()))
	case "STATS_TOTALS":
		s.table(totalsColumns, totalsRows(src.Stats(), false))
	case "STATS_AVERAGES":
		s.table(totalsColumns, totalsRows(src.Stats(), true))
	case "TOTALS":
		s.table([]column{{"name", typText}, {"value", typNumeric}}, grandTotals(src.Stats()))
	case "STATE":
		// PgBouncer's: active unless paused (or suspended, which qprouter
		// never is); paused by a PAUSE of every pool.
		paused := src.Paused()
		s.table([]column{{"key", typText}, {"value", typText}},
			[][]any{{"active", yesNo(!paused)}, {"paused", yesNo(paused)}, {"suspended", "no"}})
	case "MEM", "FDS", "SOCKETS", "ACTIVE_SOCKETS", "DNS_HOSTS", "DNS_ZONES":
		s.fail("0A000", fmt.Sprintf("SHOW %s is not supported by qprouter's console", item))
	default:
		s.invalid(q)
	}
}

var poolColumns = []column{{"database", typText}, {"user", typText}, {"cl_active", typInt4}, {"cl_waiting", typInt4},
	{"cl_active_cancel_req", typInt4}, {"cl_waiting_cancel_req", typInt4}, {"sv_active", typInt4}, {"sv_active_cancel", typInt4},
	{"sv_being_canceled", typInt4}, {"sv_idle", typInt4}, {"sv_used", typInt4}, {"sv_tested", typInt4}, {"sv_login", typInt4},
	{"maxwait", typInt4}, {"maxwait_us", typInt4}, {"pool_mode", typText}}

func poolRows(pools []Pool) [][]any {
	var rows [][]any
	for _, p := range pools {
		sec := int64(p.MaxWait / time.Second)
		us := int64((p.MaxWait % time.Second) / time.Microsecond)
		// cancel requests in flight, servers being tested or logging in:
		// qprouter does not count them apart.
		rows = append(rows, []any{p.Database, p.User, p.ClientsActive, p.ClientsWaiting, null{}, null{}, p.ServersActive, null{},
			null{}, p.ServersIdle, 0, null{}, null{}, sec, us, p.Mode})
	}
	return rows
}

// socketColumns are SHOW CLIENTS' and SHOW SERVERS' columns.
var socketColumns = []column{{"type", typText}, {"user", typText}, {"database", typText}, {"state", typText},
	{"addr", typText}, {"port", typInt4}, {"local_addr", typText}, {"local_port", typInt4}, {"connect_time", typText},
	{"request_time", typText}, {"wait", typInt4}, {"wait_us", typInt4}, {"close_needed", typInt4}, {"ptr", typText},
	{"link", typText}, {"remote_pid", typInt4}, {"tls", typText}, {"application_name", typText}}

// clientPtr and serverPtr are the ptr and link values: ids, not
// addresses, unique within their kind and apart from each other.
func clientPtr(id uint32) string  { return fmt.Sprintf("0x%08x", id) }
func serverPtr(pid uint32) string { return fmt.Sprintf("0x1%08x", pid) }

func clientRows(clients []Client) [][]any {
	var rows [][]any
	for _, c := range clients {
		addr, port := hostPort(c.Addr)
		laddr, lport := hostPort(c.LocalAddr)
		var link any = ""
		if c.ServerPID != 0 {
			link = serverPtr(c.ServerPID)
		}
		tls := ""
		if c.TLS {
			tls = "TLS"
		}
		req := c.RequestTime
		if req.IsZero() {
			req = c.ConnectTime // as PgBouncer's, set at login
		}
		rows = append(rows, []any{"C", c.User, c.Database, c.State, addr, port, laddr, lport, stamp(c.ConnectTime),
			stamp(req), int64(c.Wait / time.Second), int64(c.Wait % time.Second / time.Microsecond), 0, clientPtr(c.ID), link, 0, tls, c.ApplicationName})
	}
	return rows
}

func serverRows(servers []Server) [][]any {
	var rows [][]any
	for _, sv := range servers {
		addr, port := hostPort(sv.Addr)
		laddr, lport := hostPort(sv.LocalAddr)
		var link any = ""
		if sv.ClientID != 0 {
			link = clientPtr(sv.ClientID)
		}
		rows = append(rows, []any{"S", sv.User, sv.Database, sv.State, addr, port, laddr, lport, stamp(sv.ConnectTime),
			stamp(sv.RequestTime), 0, 0, boolInt(sv.CloseNeeded), serverPtr(sv.PID), link, int64(sv.PID), null{}, null{}})
	}
	return rows
}

var databaseColumns = []column{{"name", typText}, {"host", typText}, {"port", typInt4}, {"database", typText},
	{"force_user", typText}, {"pool_size", typInt4}, {"min_pool_size", typInt4}, {"reserve_pool", typInt4},
	{"pool_mode", typText}, {"max_connections", typInt4}, {"current_connections", typInt4}, {"paused", typInt4},
	{"disabled", typInt4}}

func databaseRows(dbs []Database) [][]any {
	var rows [][]any
	for _, d := range dbs {
		rows = append(rows, []any{d.Name, d.Host, d.Port, d.Database, d.ForceUser, d.PoolSize, d.MinPoolSize, d.ReservePool,
			d.PoolMode, d.MaxConnections, d.Connections, boolInt(d.Paused), boolInt(d.Disabled)})
	}
	return rows
}

// lists is SHOW LISTS: PgBouncer's lists that qprouter has.
func (s *session) lists() [][]any {
	src := s.c.Source
	pools := src.Pools()
	dbs, users := map[string]bool{}, map[string]bool{}
	for _, p := range pools {
		dbs[p.Database], users[p.User] = true, true
	}
	for _, d := range src.Databases() {
		dbs[d.Name] = true
	}
	if src.Users != nil {
		// as SHOW USERS lists them (the users of every pool among them),
		// not the console's own pool
		clear(users)
		for _, u := range src.Users() {
			users[u.Name] = true
		}
	}
	// used_servers is every server connection open, idle ones included,
	// as PgBouncer counts its server structs in use; free_servers is, in
	// PgBouncer, the spare structs of that cache, which qprouter does not
	// have: 0 (an empty cache's count), not the idle connections.
	return [][]any{{"databases", len(dbs)}, {"users", len(users)}, {"pools", len(pools)},
		{"used_clients", len(src.Clients())}, {"used_servers", len(src.Servers())}, {"free_servers", 0}}
}

var statsColumns = []column{{"database", typText}, {"total_xact_count", typNumeric}, {"total_query_count", typNumeric},
	{"total_received", typNumeric}, {"total_sent", typNumeric}, {"total_xact_time", typNumeric}, {"total_query_time", typNumeric},
	{"total_wait_time", typNumeric}, {"avg_xact_count", typNumeric}, {"avg_query_count", typNumeric}, {"avg_recv", typNumeric},
	{"avg_sent", typNumeric}, {"avg_xact_time", typNumeric}, {"avg_query_time", typNumeric}, {"avg_wait_time", typNumeric}}

func statsRows(stats []Stats) [][]any {
	var rows [][]any
	for _, st := range stats {
		a := st.Averages
		rows = append(rows, []any{st.Database, count(st.Transactions), count(st.Queries), count(st.Received), count(st.Sent),
			micros(st.TransactionTime), micros(st.QueryTime), micros(st.WaitTime), count(a.Transactions), count(a.Queries),
			count(a.Received), count(a.Sent), micros(a.TransactionTime), micros(a.QueryTime), micros(a.WaitTime)})
	}
	return rows
}

var totalsColumns = []column{{"database", typText}, {"xact_count", typNumeric}, {"query_count", typNumeric},
	{"bytes_received", typNumeric}, {"bytes_sent", typNumeric}, {"xact_time", typNumeric}, {"query_time", typNumeric},
	{"wait_time", typNumeric}}

func totalsRows(stats []Stats, averages bool) [][]any {
	var rows [][]any
	for _, st := range stats {
		if averages {
			a := st.Averages
			rows = append(rows, []any{st.Database, count(a.Transactions), count(a.Queries), count(a.Received), count(a.Sent),
				micros(a.TransactionTime), micros(a.QueryTime), micros(a.WaitTime)})
			continue
		}
		rows = append(rows, []any{st.Database, count(st.Transactions), count(st.Queries), count(st.Received), count(st.Sent),
			micros(st.TransactionTime), micros(st.QueryTime), micros(st.WaitTime)})
	}
	return rows
}

// grandTotals is SHOW TOTALS: the sums over every database, then the
// averages' sums (rates) and times, each the mean over every database's
// transactions or queries of the period, as PgBouncer's: an idle database
// does not dilute it.
func grandTotals(stats []Stats) [][]any {
	var t Stats
	var xactTime, queryTime float64 // time x count, summed
	// The rates are whole numbers per second: databases with less than one
	// transaction a second weigh nothing. Where every one does, the mean
	// over those with a time is the answer.
	var xactMean, queryMean time.Duration
	var xactN, queryN int64
	xactKnown := true
	for _, st := range stats {
		a := st.Averages
		if a.TransactionTime < 0 {
			xactKnown = false
		}
		xactTime += float64(a.TransactionTime) * float64(a.Transactions)
		queryTime += float64(a.QueryTime) * float64(a.Queries)
		if a.TransactionTime > 0 {
			xactMean += a.TransactionTime
			xactN++
		}
		if a.QueryTime > 0 {
			queryMean += a.QueryTime
			queryN++
		}
		t.Transactions += st.Transactions
		t.Queries += st.Queries
		t.Received = addKnown(t.Received, st.Received)
		t.Sent = addKnown(t.Sent, st.Sent)
		t.TransactionTime = addKnownD(t.TransactionTime, st.TransactionTime)
		t.QueryTime += st.QueryTime
		t.WaitTime += st.WaitTime
		t.Averages.Transactions += a.Transactions
		t.Averages.Queries += a.Queries
		t.Averages.Received = addKnown(t.Averages.Received, a.Received)
		t.Averages.Sent = addKnown(t.Averages.Sent, a.Sent)
		t.Averages.WaitTime += a.WaitTime
	}
	switch {
	case !xactKnown:
		t.Averages.TransactionTime = -1
	case t.Averages.Transactions > 0:
		t.Averages.TransactionTime = time.Duration(xactTime / float64(t.Averages.Transactions))
	case xactN > 0:
		t.Averages.TransactionTime = xactMean / time.Duration(xactN)
	}
	switch {
	case t.Averages.Queries > 0:
		t.Averages.QueryTime = time.Duration(queryTime / float64(t.Averages.Queries))
	case queryN > 0:
		t.Averages.QueryTime = queryMean / time.Duration(queryN)
	}
	a := t.Averages
	return [][]any{{"total_xact_count", count(t.Transactions)}, {"total_query_count", count(t.Queries)},
		{"total_client_bytes", count(t.Received)}, {"total_server_bytes", count(t.Sent)},
		{"total_xact_time", micros(t.TransactionTime)}, {"total_query_time", micros(t.QueryTime)},
		{"total_wait_time", micros(t.WaitTime)}, {"avg_xact_count", count(a.Transactions)},
		{"avg_query_count", count(a.Queries)}, {"avg_client_bytes", count(a.Received)}, {"avg_server_bytes", count(a.Sent)},
		{"avg_xact_time", micros(a.TransactionTime)}, {"avg_query_time", micros(a.QueryTime)}, {"avg_wait_time", micros(a.WaitTime)}}
}

// addKnown adds b to a, unknown (negative) when either is.
func addKnown(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

func addKnownD(a, b time.Duration) time.Duration { return time.Duration(addKnown(int64(a), int64(b))) }

// count is a counter's value; negative ones were not measured.
func count(v int64) any {
	if v < 0 {
		return null{}
	}
	return v
}

// micros is a time in microseconds, PgBouncer's unit.
func micros(d time.Duration) any {
	if d < 0 {
		return null{}
	}
	return int64(d / time.Microsecond)
}

func hostPort(addr string) (any, any) {
	if addr == "" {
		return null{}, null{}
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, null{} // a Unix socket path
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return h, null{}
	}
	return h, n
}

// stamp is PgBouncer's time format.
func stamp(t time.Time) any {
	if t.IsZero() {
		return null{}
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// table sends a result: RowDescription, the rows in text, CommandComplete
// "SHOW".
func (s *session) table(cols []column, rows [][]any) {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, c := range cols {
		size := int16(-1)
		if c.oid == typInt4 {
			size = 4
		}
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(c.name), DataTypeOID: c.oid, DataTypeSize: size, TypeModifier: -1}
	}
	s.out.Send(rd)
	for _, r := range rows {
		vals := make([][]byte, len(r))
		for i, v := range r {
			vals[i] = text(v)
		}
		s.out.Send(&pgproto3.DataRow{Values: vals})
	}
	s.complete("SHOW")
}

// text is a value's text form; nil for SQL NULL.
func text(v any) []byte {
	switch v := v.(type) {
	case null:
		return nil
	case string:
		return []byte(v)
	case int:
		return strconv.AppendInt(nil, int64(v), 10)
	case int64:
		return strconv.AppendInt(nil, v, 10)
	default:
		return fmt.Append(nil, v)
	}
}
