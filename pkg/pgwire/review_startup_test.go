// Review of the startup packet against a real PostgreSQL 15 (pgtest's
// shared cluster, trust authentication): the same client bytes go to
// PostgreSQL and to Accept, and the answers are compared.

package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvExchange writes pkt to addr and returns every byte the server sent
// until it closed the connection or went quiet.
func rvExchange(t *testing.T, addr string, pkt []byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(pkt); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.Bytes()
		}
	}
}

// rvAcceptServer runs Accept (then Welcome) with cfg on each connection.
func rvAcceptServer(t *testing.T, cfg *ServerConfig) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				cl, _, err := Accept(context.Background(), conn, cfg)
				if err != nil || cl == nil {
					return
				}
				cl.Welcome(map[string]string{"server_version": "15"})
				io.Copy(io.Discard, cl.Conn)
			}()
		}
	}()
	return ln.Addr().String()
}

// rvMsg is one backend message: its type and body.
type rvMsg struct {
	typ  byte
	body []byte
}

func rvSplit(b []byte) []rvMsg {
	var out []rvMsg
	for len(b) >= 5 {
		n := int(binary.BigEndian.Uint32(b[1:5]))
		if n < 4 || 1+n > len(b) {
			break
		}
		out = append(out, rvMsg{b[0], b[5 : 1+n]})
		b = b[1+n:]
	}
	return out
}

// rvFields are an ErrorResponse's S, V, C, M and H fields.
func rvFields(body []byte) map[byte]string {
	f := map[byte]string{}
	for _, p := range bytes.Split(body, []byte{0}) {
		if len(p) > 0 && bytes.IndexByte([]byte("SVCMH"), p[0]) >= 0 {
			f[p[0]] = string(p[1:])
		}
	}
	return f
}

func rvPostgres(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(pgtest.Shared(t).Port)
}

// NegotiateProtocolVersion carries the newest protocol version the server
// takes, major and minor: PostgreSQL 15's SendNegotiateProtocolVersion
// sends PG_PROTOCOL_LATEST, 0x00030000 (bytes 00 03 00 00). startup.go
// startupMessage sends NewestMinorProtocol: 0, i.e. 00 00 00 00, which
// reads as "protocol 0.0"; libpq 18 (max_protocol_version=3.2 or latest)
// refuses that as a downgrade to a pre-3.0 version.
func TestStartupReviewNegotiateProtocolVersionIsFullVersion(t *testing.T) {
	pg, ours := rvPostgres(t), rvAcceptServer(t, trustAll)
	for name, pkt := range map[string][]byte{
		"protocol 3.2":          packet(3<<16|2, params("user", "postgres")...),
		"3.0 with _pq_ option":  packet(protocol30, params("user", "postgres", "_pq_.foo", "1")...),
		"3.1 with _pq_ options": packet(3<<16|1, params("_pq_.a", "x", "user", "postgres", "_pq_.b", "y")...),
	} {
		want, got := rvSplit(rvExchange(t, pg, pkt)), rvSplit(rvExchange(t, ours, pkt))
		if len(want) == 0 || want[0].typ != 'v' {
			t.Fatalf("%s: PostgreSQL answered %v", name, want)
		}
		if len(got) == 0 || got[0].typ != 'v' || !bytes.Equal(got[0].body, want[0].body) {
			var first rvMsg
			if len(got) > 0 {
				first = got[0]
			}
			t.Errorf("%s: NegotiateProtocolVersion body %x, PostgreSQL 15 sends %x", name, first.body, want[0].body)
		}
	}
}

// PostgreSQL 15 sends NegotiateProtocolVersion as soon as the startup
// packet is parsed, before it checks for a user name: a 3.2 (or _pq_.)
// startup packet without a user gets 'v' then FATAL 28000. startup.go
// startupMessage returns the 28000 error before it reaches the
// NegotiateProtocolVersion, so the client never hears the negotiation.
func TestStartupReviewNegotiateBeforeMissingUserError(t *testing.T) {
	pg, ours := rvPostgres(t), rvAcceptServer(t, trustAll)
	pkt := packet(3<<16|2, params("database", "postgres", "_pq_.x", "1")...)
	types := func(ms []rvMsg) string {
		s := ""
		for _, m := range ms {
			s += string(m.typ)
		}
		return s
	}
	want, got := types(rvSplit(rvExchange(t, pg, pkt))), types(rvSplit(rvExchange(t, ours, pkt)))
	if want != "vE" {
		t.Fatalf("PostgreSQL answered %q", want)
	}
	if got != want {
		t.Errorf("answer %q, PostgreSQL 15 sends %q (NegotiateProtocolVersion, then the missing-user error)", got, want)
	}
}

// The replication parameter is a boolean or "database": PostgreSQL 15
// refuses anything else with FATAL 22023 `invalid value for parameter
// "replication": "..."` (hint: the valid values). startup.go replication()
// takes "" (and a bare "o", and any other word) as false or true instead:
// replication="" gets a normal session, replication=xyz gets 0A000
// "replication connections are not supported".
func TestStartupReviewInvalidReplicationValueRefused(t *testing.T) {
	pg, ours := rvPostgres(t), rvAcceptServer(t, trustAll)
	for _, v := range []string{"", "xyz", "o"} {
		pkt := packet(protocol30, params("user", "postgres", "replication", v)...)
		want, got := rvSplit(rvExchange(t, pg, pkt)), rvSplit(rvExchange(t, ours, pkt))
		if len(want) != 1 || want[0].typ != 'E' {
			t.Fatalf("replication=%q: PostgreSQL answered %v", v, want)
		}
		wf := rvFields(want[0].body)
		if wf['C'] != CodeInvalidParameterValue {
			t.Fatalf("replication=%q: PostgreSQL said %v", v, wf)
		}
		if len(got) == 0 || got[0].typ != 'E' {
			t.Errorf("replication=%q: first answer %q, PostgreSQL 15 refuses: %s %s %q", v, got[0].typ, wf['V'], wf['C'], wf['M'])
			continue
		}
		if gf := rvFields(got[0].body); gf['C'] != wf['C'] || gf['M'] != wf['M'] || gf['S'] != wf['S'] {
			t.Errorf("replication=%q: %s %s %q, PostgreSQL 15: %s %s %q", v, gf['S'], gf['C'], gf['M'], wf['S'], wf['C'], wf['M'])
		}
	}
}

// OptionSettings must split "options" as PostgreSQL's pg_split_opts does:
// on any isspace() byte (also newline, carriage return, form feed,
// vertical tab), a backslash escaping the next byte and a trailing
// backslash dropped. options.go splitOptions splits on ' ' and '\t' only
// and keeps a trailing backslash, so "-c a=1\n-c b=2" gives a the value
// "1\n-c" and loses b. Checked against what PostgreSQL 15 applied.
func TestStartupReviewOptionsSplitLikePostgres(t *testing.T) {
	url := pgtest.Shared(t).URL()
	for _, opt := range []string{
		"-c application_name=a\n-c search_path=b",
		"-c application_name=a\r\n-c search_path=b",
		"-c application_name=a\f-c search_path=b",
		"-c application_name=a\v-c search_path=b",
		`-c search_path=s -c application_name=x\`,
	} {
		conf, err := pgconn.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		conf.RuntimeParams["options"] = opt
		c, err := pgconn.ConnectConfig(context.Background(), conf)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for _, name := range []string{"application_name", "search_path"} {
			r := c.ExecParams(context.Background(), "select current_setting($1)", [][]byte{[]byte(name)}, nil, nil, nil).Read()
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			want[name] = string(r.Rows[0][0])
		}
		c.Close(context.Background())
		got := OptionSettings(opt)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("options %q: OptionSettings gives %s=%q, PostgreSQL 15 applied %q (all: %q)", opt, name, got[name], w, got)
			}
		}
	}
}
