package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

func rvShow(t *testing.T, url, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatalf("current_setting(%s): %v", name, err)
	}
	return v
}

// --set NAME=VALUE is "any setting"; many GUC values are lists with commas
// (search_path, datestyle, shared_preload_libraries, log_destination). kong
// splits []string flags on commas by default, so the value is cut apart.
func TestHarnessReviewSetValueWithComma(t *testing.T) {
	state := t.TempDir()
	code, url, stderr := pgsandbox(t, "--state-dir", state, "start", "--set", "search_path=zz,public", "--set", "datestyle=iso,dmy")
	if code == 0 {
		defer pgsandbox(t, "--state-dir", state, "stop")
	}
	if code != 0 {
		t.Fatalf("start --set search_path=zz,public exited %d: %s", code, stderr)
	}
	url = strings.TrimSpace(url)
	// From postgresql.conf the list is kept as written.
	if got := rvShow(t, url, "search_path"); got != "zz,public" {
		t.Errorf("search_path = %q, want %q", got, "zz,public")
	}
	if got := rvShow(t, url, "datestyle"); got != "ISO, DMY" {
		t.Errorf("datestyle = %q, want %q", got, "ISO, DMY")
	}
}

func rvPostmasterPID(t *testing.T, base string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(base, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A sandbox whose server died (OOM killer, kill -9, a reboot that kept
// /tmp) must still be stoppable: `stop` should clean up and forget it and
// exit 0, so that `start` works again. Instead pg_ctl stop fails on the
// stale postmaster.pid, stop exits 1 and keeps the state file.
func TestHarnessReviewStopAfterServerDied(t *testing.T) {
	state := t.TempDir()
	code, _, stderr := pgsandbox(t, "--state-dir", state, "start")
	if code != 0 {
		t.Fatalf("start exited %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(state, "default"))
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(string(raw))
	defer os.RemoveAll(base)
	pid := rvPostmasterPID(t, base)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && syscall.Kill(pid, 0) == nil && !rvZombie(pid); i++ {
		time.Sleep(50 * time.Millisecond)
	}

	code, _, stderr = pgsandbox(t, "--state-dir", state, "stop")
	if code != 0 {
		t.Errorf("stop of a sandbox whose server died exited %d: %s", code, strings.TrimSpace(stderr))
	}
	code, _, stderr = pgsandbox(t, "--state-dir", state, "start")
	if code == 0 {
		pgsandbox(t, "--state-dir", state, "stop")
	} else {
		t.Errorf("start after stop exited %d: %s", code, strings.TrimSpace(stderr))
	}
}

// Two `start`s of the same name at once (two terminals, two CI steps) both
// succeed: each sees no state file, each starts a cluster, the second
// overwrites the first's state file, and the first cluster keeps running
// with nothing that can stop it. One of them must fail ("already running").
func TestHarnessReviewConcurrentStartSameName(t *testing.T) {
	state := t.TempDir()
	var wg sync.WaitGroup
	codes := make([]int, 2)
	urls := make([]string, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], urls[i], _ = pgsandbox(t, "--state-dir", state, "--name", "same", "start")
		}()
	}
	wg.Wait()
	// Clean up whatever was started, including the one nobody remembers.
	pgsandbox(t, "--state-dir", state, "--name", "same", "stop")
	for i, u := range urls {
		u = strings.TrimSpace(u)
		if codes[i] != 0 || u == "" {
			continue
		}
		rvStopByURL(u)
	}
	if codes[0] == 0 && codes[1] == 0 {
		t.Errorf("both concurrent starts of sandbox %q succeeded (%s and %s); only one is remembered, the other cluster is leaked",
			"same", strings.TrimSpace(urls[0]), strings.TrimSpace(urls[1]))
	}
}

// rvStopByURL stops a leaked cluster by finding its directory from the port.
func rvStopByURL(url string) {
	i := strings.Index(url, "127.0.0.1:")
	if i < 0 {
		return
	}
	port := strings.SplitN(url[i+len("127.0.0.1:"):], "/", 2)[0]
	matches, _ := filepath.Glob("/tmp/pgtest-*/data/pgtest.conf")
	for _, m := range matches {
		raw, _ := os.ReadFile(m)
		if strings.Contains(string(raw), "port = '"+port+"'") {
			base := filepath.Dir(filepath.Dir(m))
			if raw, err := os.ReadFile(filepath.Join(base, "data", "postmaster.pid")); err == nil {
				if pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGQUIT)
					for j := 0; j < 100 && syscall.Kill(pid, 0) == nil; j++ {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}
			os.RemoveAll(base)
		}
	}
}

// SIGINT (Ctrl-C) or SIGTERM while `start` runs must not leave a cluster
// behind that no `stop` can find: the CLI should remove what it created.
// Today pgsandbox has no signal handling, the detached cluster has no
// watchdog, and initdb/pg_ctl run in their own process group, so they
// carry on after pgsandbox died and leave /tmp/pgtest-* (and, if the
// signal lands during pg_ctl start, a running postmaster) unrecorded.
func TestHarnessReviewInterruptedStartLeavesNothing(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "zzharness-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // the server account must traverse it
	defer rvCleanDir(dir)
	state := t.TempDir()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHarnessReviewHelperStartChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "RV_HARNESS_CHILD=1", "PGTEST_DIR="+dir, "PGSANDBOX_STATE_DIR="+state)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until initdb is under way, then interrupt like Ctrl-C.
	deadline := time.Now().Add(15 * time.Second)
	for {
		m, _ := filepath.Glob(filepath.Join(dir, "pgtest-*", "data"))
		if len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("child never started initdb")
		}
		time.Sleep(5 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	cmd.Wait()

	// Give any cleanup 8 s to finish.
	var left []string
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		left, _ = filepath.Glob(filepath.Join(dir, "pgtest-*"))
		if len(left) == 0 {
			break
		}
	}
	st, _ := os.ReadDir(state)
	if len(left) > 0 {
		t.Errorf("interrupted start left %v behind (state dir holds %d entries, so `stop` cannot find it)", left, len(st))
	}
}

// TestHarnessReviewHelperStartChild is the child of
// TestHarnessReviewInterruptedStartLeavesNothing.
func TestHarnessReviewHelperStartChild(t *testing.T) {
	if os.Getenv("RV_HARNESS_CHILD") == "" {
		t.Skip("only runs as a child")
	}
	code := run([]string{"start", "--name", "interrupted"}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
}

// rvCleanDir waits for stray initdb/pg_ctl work in dir to end, stops any
// server and removes everything.
func rvCleanDir(dir string) {
	time.Sleep(3 * time.Second) // an orphaned initdb takes about 1-2 s
	matches, _ := filepath.Glob(filepath.Join(dir, "pgtest-*", "data", "postmaster.pid"))
	for _, m := range matches {
		raw, _ := os.ReadFile(m)
		if pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0]); err == nil {
			syscall.Kill(pid, syscall.SIGQUIT)
			for j := 0; j < 100 && syscall.Kill(pid, 0) == nil; j++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	os.RemoveAll(dir)
}

func rvZombie(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	st := string(raw)
	i := strings.LastIndexByte(st, ')')
	return i >= 0 && i+2 < len(st) && st[i+2] == 'Z'
}

// scripts/load-tpch --from-files DIR pastes each file's path into
// "copy T from '<path>'" without doubling single quotes, so a directory
// such as "/data/o'brien tpch" (the script already resolves it to an
// absolute path, so the user's home directory counts) breaks the SQL and
// the load fails. tpchgen is replaced by a tiny fake (TPCHGEN, as the
// script allows); psql and the server are real.
func TestHarnessReviewLoadTpchFromFilesQuote(t *testing.T) {
	c := pgtest.Start(t, pgtest.Options{})
	root, err := os.MkdirTemp("/tmp", "zzharness-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	files := filepath.Join(root, "o'brien tpch")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	tables := []string{"lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region"}
	var counts, ddl strings.Builder
	for _, tb := range tables {
		fmt.Fprintf(&counts, "%s 2\n", tb)
		fmt.Fprintf(&ddl, "create table %s (x int);\n", tb)
		if err := os.WriteFile(filepath.Join(files, tb+".copy"), []byte("1\n2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := filepath.Join(root, "tpchgen")
	script := "#!/bin/sh\n" +
		"case \"$1\" in\n" +
		"count) printf '" + counts.String() + "' ;;\n" +
		"ddl) [ \"$2\" = --constraints ] || printf '" + ddl.String() + "' ;;\n" +
		"*) echo 1 ;;\n" +
		"esac\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, _ := filepath.Abs("../..")
	cmd := exec.Command("bash", filepath.Join(repo, "scripts", "load-tpch"),
		"--from-files", files, "--database-url", c.URL(), "--jobs", "2", "--no-constraints")
	cmd.Env = append(os.Environ(), "TPCHGEN="+fake)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("load-tpch --from-files %q failed: %v\n%s", files, err, out)
	}
}
