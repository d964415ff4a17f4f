package proxy_test

// Review of the data-flow parts of the protocol beyond plain queries:
// COPY, NOTICE/NOTIFY, ParameterStatus and CancelRequest, each next to a
// direct connection to PostgreSQL 15.

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// A transaction-mode client keeps the settings it was welcomed with when
// the pool's server connections do not all have the same defaults (an
// ALTER DATABASE ... SET made while the pool already had a connection, or
// hosts with different configurations): on PostgreSQL a session keeps
// its TimeZone until it changes it, and PgBouncer sets the client's
// remembered value on each server it lends the client.
func TestFlowReviewServerDefaultsDiffer(t *testing.T) {
	execDirect(t, "drop database if exists zzf_tz with (force)")
	execDirect(t, "create database zzf_tz")
	defer execDirect(t, "drop database if exists zzf_tz with (force)")
	script := func(t *testing.T, addr string) []string {
		execDirect(t, "alter database zzf_tz set timezone = 'America/Sao_Paulo'")
		a := traceDial(t, addr, map[string]string{"database": "zzf_tz"})
		var out []string
		out = append(out, a.query(t, "show timezone"))
		// The database's default changes for sessions that start now.
		execDirect(t, "alter database zzf_tz set timezone = 'Pacific/Chatham'")
		b := traceDial(t, addr, map[string]string{"database": "zzf_tz"})
		b.query(t, "begin") // holds the client's server, if it has no other
		out = append(out, a.query(t, "show timezone"))
		out = append(out, a.query(t, "select '2024-01-01 12:00'::timestamptz = '2024-01-01 12:00-03'::timestamptz"))
		out = append(out, "client was told TimeZone="+a.params["TimeZone"])
		b.query(t, "commit")
		return out
	}
	compareTracesIn(t, traceModes[1:], 2, script)
}

// A client that LISTENs on a channel it also NOTIFYs recognises its own
// notifications by their process ID, the one BackendKeyData gave it, as
// PostgreSQL's NOTIFY documentation recommends ("noticing whether the
// notifying session's server process PID ... is the same as one's own
// session's PID"). LISTEN pins the client in transaction mode, so its
// NOTIFY runs on the server it listens on, whose PID is not the client's.
func TestFlowReviewOwnNotificationPID(t *testing.T) {
	c := pgtest.Shared(t)
	check := func(t *testing.T, addr string) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fe := pgproto3.NewFrontend(conn, conn)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber,
			Parameters: map[string]string{"user": "postgres", "database": "postgres"}})
		fe.Send(&pgproto3.Query{String: "listen zzf_self"})
		fe.Send(&pgproto3.Query{String: "notify zzf_self, 'mine'"})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		var key uint32
		for {
			m, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := m.(type) {
			case *pgproto3.BackendKeyData:
				key = m.ProcessID
			case *pgproto3.ErrorResponse:
				t.Fatalf("%s: %s", m.Code, m.Message)
			case *pgproto3.NotificationResponse:
				if m.PID != key {
					t.Errorf("own notification carries PID %d, the client's PID (BackendKeyData) is %d: it cannot tell it is its own", m.PID, key)
				}
				return
			}
		}
	}
	t.Run("direct", func(t *testing.T) { check(t, fmt.Sprintf("127.0.0.1:%d", c.Port)) })
	for _, m := range traceModes {
		t.Run(m.name, func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: m.mode, size: 2, loop: m.loop, timeout: 3 * time.Second})
			check(t, r.addr)
		})
	}
}
