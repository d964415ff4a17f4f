// Second review of perfhtml's CLI. Each test asserts what --help promises
// and fails on the code as reviewed.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const rvp2Summary = `{"type":"run","version":"1.0","run_id":"r"}` + "\n" +
	`{"type":"stat","version":"1.0","path":"native","query":"q","phase":"warm","concurrency":1,"n":30,"p50_ns":1000,"p95_ns":2000,"p99_ns":3000}` + "\n"

// TestPerf2ReviewOutToDeviceOrLink: "perfhtml summary.jsonl -o /dev/null" (or
// -o /dev/stdout) is the usual way to write to a device or through a link,
// but writeFile (cli.go) always writes a temporary file next to FILE and
// renames it over FILE. Run as root (as in containers), -o /dev/null
// replaces the system's null device with a regular file holding the page,
// and -o /dev/stdout replaces the /dev/stdout symlink, so the page never
// reaches stdout (as another user it fails with EACCES on /dev). The
// test uses a null device node and a symlink to /dev/null in a temporary
// directory. Expected: the page is written to the device / through the
// link; the node stays a character device and the link stays a link.
func TestPerf2ReviewOutToDeviceOrLink(t *testing.T) {
	dir := t.TempDir()

	link := filepath.Join(dir, "stdout-like")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	code, _, msg := call(t, rvp2Summary, "-o", link)
	if fi, err := os.Lstat(link); err != nil {
		t.Errorf("-o LINK: exit %d, stderr %q; LINK is gone: %v", code, msg, err)
	} else if fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("-o LINK (a symlink to /dev/null): exit %d, stderr %q; LINK is now a %v file, want it still a symlink", code, msg, fi.Mode())
	}

	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod not permitted here (%v): device case skipped", err)
		return
	}
	code, _, msg = call(t, rvp2Summary, "-o", dev)
	if fi, err := os.Lstat(dev); err != nil {
		t.Errorf("-o DEVICE: exit %d, stderr %q; DEVICE is gone: %v", code, msg, err)
	} else if fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("-o DEVICE (a null device node): exit %d, stderr %q; DEVICE is now a %v file, want it still a character device", code, msg, fi.Mode())
	}
}

// TestPerf2ReviewReadErrorIsNotABadRecord: --help: "Exit status: 0 done; 1
// reading or writing failed; 2 bad command line or a bad record (the
// message names file:line)". A summary that cannot be read (here a
// directory, "read ...: is a directory"; also EIO) comes back from
// perf.Reader as a *LineError, so perfhtml reports "DIR:1: bad record: read
// DIR: is a directory" and exits 2, as if the file held a bad line 1.
// Expected: exit 1 and no "bad record".
func TestPerf2ReviewReadErrorIsNotABadRecord(t *testing.T) {
	dir := t.TempDir()
	code, out, msg := call(t, "", dir)
	if code != exitError || strings.Contains(msg, "bad record") || out != "" {
		t.Errorf("reading a directory: exit %d, stderr %q; want exit %d (reading failed), not a bad record", code, msg, exitError)
	}
}
