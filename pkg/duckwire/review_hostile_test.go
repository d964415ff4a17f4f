// Review: qpanalytics against hostile or broken clients.

package duckwire

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// hsChildEnv names the environment variable that makes
// TestHostileReviewServerChild serve a fixture database in a child process
// of the test binary (so that a crash there fails the parent test rather
// than ending the whole test run).
const hsChildEnv = "ZZ_HOSTILE_DUCKWIRE_CHILD"

// TestHostileReviewServerChild is the child: it serves until killed and
// prints its address. Run alone it does nothing.
func TestHostileReviewServerChild(t *testing.T) {
	if os.Getenv(hsChildEnv) == "" {
		t.Skip("only as the child of a TestHostileReview test")
	}
	s := startServer(t, nil)
	fmt.Printf("ADDR %s\n", s.addr)
	time.Sleep(60 * time.Second)
}

// hsChild starts a qpanalytics server in a child process and returns its
// address and a function that reports whether it is still alive (and, if
// not, its output).
func hsChild(t *testing.T) (addr string, alive func() (bool, string)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileReviewServerChild$", "-test.v")
	cmd.Env = append(os.Environ(), hsChildEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	done := make(chan struct{})
	got := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "ADDR "); ok {
				got <- a
			}
			if len(line) < 300 && log.Len() < 800 {
				log.WriteString(line + "\n")
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	select {
	case addr = <-got:
	case <-done:
		t.Fatalf("child ended before listening:\n%s", log.String())
	case <-time.After(15 * time.Second):
		t.Fatal("child not listening after 15s")
	}
	return addr, func() (bool, string) {
		select {
		case <-done:
			return false, log.String()
		case <-time.After(200 * time.Millisecond):
			return true, ""
		}
	}
}

// A Query of 200 KB (under the 1 MiB MaxMessage), "select 1+1+...+1"
// with 100,000 terms, kills the whole qpanalytics process: split
// (classify.go) hands it to pg_query.Parse, whose C code recurses once
// per operator and overflows the thread's stack (SIGSEGV during cgo
// execution, which no recover() catches). Every other client's session
// dies with it. PostgreSQL 15 answers the same bytes with ERROR 54001
// "stack depth limit exceeded" and the session goes on (qprouter's
// TestHostileReview tests send it to the shared cluster). The server runs in
// a child process so that the crash fails this test only.
func TestHostileReviewDeepExpressionCrashesServer(t *testing.T) {
	addr, alive := hsChild(t)
	other := dialRaw(t, addr) // another client, connected before
	c := dialRaw(t, addr)
	c.send(&pgproto3.Query{String: "select " + strings.Repeat("1+", 100000) + "1"})
	c.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	m, err := c.fe.Receive()
	if ok, log := alive(); !ok {
		t.Fatalf("the server process died on a 200 KB query (the client read %T, %v):\n%s", m, err, log)
	}
	if _, isErr := m.(*pgproto3.ErrorResponse); !isErr {
		t.Errorf("got %T, %v; want an ErrorResponse (PostgreSQL: 54001 stack depth limit exceeded)", m, err)
	}
	other.send(&pgproto3.Query{String: "select 42"})
	expect(t, other.until('Z'), "T D(42) C(SELECT 1) Z(I)")
}
