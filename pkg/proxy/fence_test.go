package proxy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// A pipeline of Sync groups that each parse the unnamed statement runs
// without waiting between groups (postgres.js with prepare: false), and so
// does one whose groups each parse a statement of a new name (postgres.js
// with prepare: true); one whose groups parse and close the same name
// waits after each such group for its answers (fence.go). All get every
// answer right.
func TestFenceHoldsOnlyNamedChanges(t *testing.T) {
	c := pgtest.Shared(t)
	const groups = 20
	bind := func(stmt string) []byte { return msg('B', "\x00"+stmt+"\x00\x00\x00\x00\x00\x00\x00") }
	exec := msg('E', "\x00\x00\x00\x00\x00")
	var want []string
	closeS := func(stmt string) []byte { return msg('C', "S"+stmt+"\x00") }
	var unnamedIn, namedIn, reusedIn []byte
	for i := range groups {
		sql := fmt.Sprintf("select %d", i)
		unnamedIn = append(unnamedIn, synced(msg('P', "\x00"+sql+"\x00\x00\x00"), bind(""), exec)...)
		name := fmt.Sprintf("s%d", i)
		namedIn = append(namedIn, synced(msg('P', name+"\x00"+sql+"\x00\x00\x00"), bind(name), exec)...)
		reusedIn = append(reusedIn, synced(msg('P', "t\x00"+sql+"\x00\x00\x00"), bind("t"), exec, closeS("t"))...)
		want = append(want, fmt.Sprint(i))
	}
	for _, loop := range []bool{false, true} {
		t.Run(fmt.Sprintf("loop=%v", loop), func(t *testing.T) {
			r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1, loop: loop})
			a := dialRaw(t, r.addr)
			// run sends a pipeline of groups Sync groups in one write and
			// checks its rows and its waits at the fence (lo to hi).
			run := func(what string, in []byte, want []string, lo, hi int64) {
				t.Helper()
				before := r.FenceWaits()
				if _, err := a.conn.Write(framed(in)); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(a.answers(t, groups), ","); got != strings.Join(want, ",") {
					t.Fatalf("%s pipeline: %q", what, got)
				}
				if n := r.FenceWaits() - before; n < lo || n > hi {
					t.Errorf("%s pipeline: %d waits at the fence, want %d to %d", what, n, lo, hi)
				}
			}
			run("unnamed", unnamedIn, want, 0, 0)
			run("named", namedIn, want, 0, 0)
			// Steady state: the statements exist; Bind and Execute alone
			// change nothing and pipeline freely.
			var again []byte
			for i := range groups {
				again = append(again, synced(bind(fmt.Sprintf("s%d", i)), exec)...)
			}
			run("prepared", again, want, 0, 0)
			// A group that closes the unnamed statement, then groups that
			// run named ones: those do not wait for it.
			mixed := synced(closeS(""))
			for i := 1; i < groups; i++ {
				mixed = append(mixed, synced(bind(fmt.Sprintf("s%d", i)), exec)...)
			}
			run("mixed", mixed, want[1:], 0, 0)
			// Each group parses the name the one before closed: its Parse
			// waits for those answers, once before each group after the
			// first when the pipeline arrives in one read, as it does here;
			// fewer if a group came after the answers to the one before.
			run("reused-name", reusedIn, want, 1, groups-1)
		})
	}
}
