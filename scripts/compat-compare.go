//go:build ignore

// compat-compare: the per-test comparison of two `go test -json` streams
// (a suite run direct to PostgreSQL and through qprouter) for
// scripts/compat-drivers, which runs it with `go run`. Standard library
// only, so it needs no module.
//
// It appends to -out one compat_result record per test (and per package)
// seen in either run, then one compat_summary record; it prints the
// differences on stdout. -direct and -proxy each take a comma-separated
// list: a run's first go test, then the reruns of packages whose test
// binary ended early (see -crashed), merged.
//
// With -crashed FILES instead, it prints one line per package whose test
// binary ended before all its started tests did (a panic in a test ends
// the whole binary): the import path, a tab, and the top-level tests that
// ended, joined by "|", for the caller to rerun the package without them.
//
// Exit codes: 0 done (differences or not), 1 a file could not be read or
// written, 2 bad usage.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json); unknown fields are
// ignored.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// outcome is what one run said of one test.
type outcome struct {
	status  string // pass, fail, skip; "none" when it started and never ended; "absent" when never seen
	elapsed float64
	output  []string // the test's output lines, at most maxLines (the last ones)
}

const maxLines = 40

type key struct{ pkg, test string }

// tempName matches a t.TempDir path inside a subtest name
// ("/tmp/TestX2046152196/001/..."): its random digits differ between runs,
// so they are replaced by N to pair the two runs' subtests.
var tempName = regexp.MustCompile(`/(Test\w*?)[0-9]{6,}/`)

// readRuns reads the go test -json files of one run, in order, into
// per-test outcomes: a test keeps the first outcome that ended it (a rerun
// leaves out the tests that ended before), a package that failed in any
// file stays failed. Lines that are not JSON (build errors printed by go
// test itself) are counted, not fatal.
func readRuns(paths []string) (map[key]*outcome, int, error) {
	res := make(map[key]*outcome)
	bad := 0
	for _, path := range paths {
		n, err := readRun(path, res)
		bad += n
		if err != nil {
			return nil, 0, err
		}
	}
	return res, bad, nil
}

// readRun adds one go test -json file to res and returns its count of
// lines that are not JSON.
func readRun(path string, res map[key]*outcome) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ended := make(map[key]bool) // ended in an earlier file
	for k, o := range res {
		if o.status != "none" && (k.test != "" || o.status == "fail") {
			ended[k] = true
		}
	}
	bad := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var e event
		if b[0] != '{' || json.Unmarshal(b, &e) != nil {
			bad++
			continue
		}
		if e.Package == "" {
			continue
		}
		k := key{e.Package, tempName.ReplaceAllString(e.Test, "/${1}N/")}
		o := res[k]
		if o == nil {
			o = &outcome{status: "none"}
			res[k] = o
		}
		switch e.Action {
		case "pass", "fail", "skip":
			if ended[k] {
				continue
			}
			o.status = e.Action
			o.elapsed = e.Elapsed
		case "output":
			o.output = append(o.output, strings.TrimRight(e.Output, "\n"))
			if len(o.output) > maxLines {
				o.output = o.output[len(o.output)-maxLines:]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s:%d: %w", path, line, err)
	}
	return bad, nil
}

// crashed lists the packages of res whose test binary ended while a
// top-level test had started and not ended, each with the top-level tests
// that did end (sorted). A package none of whose tests ended is left out:
// a rerun would only crash the same way.
func crashed(res map[key]*outcome) map[string][]string {
	broken := make(map[string]bool)
	done := make(map[string][]string)
	for k, o := range res {
		if k.test == "" || strings.Contains(k.test, "/") {
			continue
		}
		if o.status == "none" {
			broken[k.pkg] = true
		} else {
			done[k.pkg] = append(done[k.pkg], k.test)
		}
	}
	out := make(map[string][]string)
	for pkg := range broken {
		if len(done[pkg]) > 0 {
			sort.Strings(done[pkg])
			out[pkg] = done[pkg]
		}
	}
	return out
}

// printCrashed writes crashed's answer for the files of one run, a line per
// package in import-path order.
func printCrashed(paths []string, stdout io.Writer) error {
	res, _, err := readRuns(paths)
	if err != nil {
		return err
	}
	c := crashed(res)
	pkgs := make([]string, 0, len(c))
	for pkg := range c {
		pkgs = append(pkgs, pkg)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		fmt.Fprintf(stdout, "%s\t%s\n", pkg, strings.Join(c[pkg], "|"))
	}
	return nil
}

// files splits a comma-separated flag value into file names.
func files(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

type result struct {
	Type         string   `json:"type"`
	Version      int      `json:"version"`
	RunID        string   `json:"run_id"`
	Suite        string   `json:"suite"`
	Package      string   `json:"package"`
	Test         string   `json:"test"`
	Level        string   `json:"level"` // package, test (top level) or subtest
	Direct       string   `json:"direct"`
	Proxy        string   `json:"proxy"`
	Same         bool     `json:"same"`
	DirectSec    float64  `json:"direct_elapsed_s"`
	ProxySec     float64  `json:"proxy_elapsed_s"`
	DirectOutput []string `json:"direct_output,omitempty"` // only when they differ
	ProxyOutput  []string `json:"proxy_output,omitempty"`
}

// counts are per level: how many were seen and how each run ended them.
type counts struct {
	Seen        int `json:"seen"`
	DirectPass  int `json:"direct_pass"`
	DirectFail  int `json:"direct_fail"`
	DirectSkip  int `json:"direct_skip"`
	DirectOther int `json:"direct_other"` // never ended, or absent from the run
	ProxyPass   int `json:"proxy_pass"`
	ProxyFail   int `json:"proxy_fail"`
	ProxySkip   int `json:"proxy_skip"`
	ProxyOther  int `json:"proxy_other"`
	Differences int `json:"differences"`
}

func (c *counts) add(d, p string) {
	c.Seen++
	switch d {
	case "pass":
		c.DirectPass++
	case "fail":
		c.DirectFail++
	case "skip":
		c.DirectSkip++
	default:
		c.DirectOther++
	}
	switch p {
	case "pass":
		c.ProxyPass++
	case "fail":
		c.ProxyFail++
	case "skip":
		c.ProxySkip++
	default:
		c.ProxyOther++
	}
	if d != p {
		c.Differences++
	}
}

type summary struct {
	Type          string `json:"type"`
	Version       int    `json:"version"`
	RunID         string `json:"run_id"`
	Suite         string `json:"suite"`
	Tests         counts `json:"tests"`    // top-level Test functions
	Subtests      counts `json:"subtests"` // t.Run children at any depth
	Packages      counts `json:"packages"`
	NonJSONDirect int    `json:"non_json_lines_direct"`
	NonJSONProxy  int    `json:"non_json_lines_proxy"`
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compat-compare", flag.ContinueOnError)
	suite := fs.String("suite", "", "suite name (pgx, pq)")
	runID := fs.String("run-id", "", "run id written into every record")
	direct := fs.String("direct", "", "go test -json output of the direct run")
	proxy := fs.String("proxy", "", "go test -json output of the run through qprouter")
	out := fs.String("out", "", "JSON-lines file to append to")
	crash := fs.String("crashed", "", "go test -json files of one run: print the packages whose test binary ended early")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *crash != "" {
		return printCrashed(files(*crash), stdout)
	}
	if *suite == "" || *direct == "" || *proxy == "" || *out == "" {
		return usageError{errors.New("-suite, -direct, -proxy and -out are required")}
	}
	d, badD, err := readRuns(files(*direct))
	if err != nil {
		return err
	}
	p, badP, err := readRuns(files(*proxy))
	if err != nil {
		return err
	}
	keys := make([]key, 0, len(d)+len(p))
	for k := range d {
		keys = append(keys, k)
	}
	for k := range p {
		if _, ok := d[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pkg != keys[j].pkg {
			return keys[i].pkg < keys[j].pkg
		}
		return keys[i].test < keys[j].test
	})

	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	sum := summary{Type: "compat_summary", Version: 1, RunID: *runID, Suite: *suite, NonJSONDirect: badD, NonJSONProxy: badP}
	absent := &outcome{status: "absent"}
	get := func(m map[key]*outcome, k key) *outcome {
		if o := m[k]; o != nil {
			return o
		}
		return absent
	}
	differs := func(k key) bool { return get(d, k).status != get(p, k).status }
	// A subtest that ran on one side only, under a parent that differs too,
	// is folded into its parent's printed line (its record is still written).
	folded := make(map[key]int)
	isFolded := func(k key) bool {
		i := strings.LastIndex(k.test, "/")
		if i < 0 || (get(d, k).status != "absent" && get(p, k).status != "absent") {
			return false
		}
		return differs(key{k.pkg, k.test[:i]})
	}
	for _, k := range keys {
		if differs(k) && isFolded(k) {
			// the nearest ancestor that is printed
			parent := k.test[:strings.LastIndex(k.test, "/")]
			for isFolded(key{k.pkg, parent}) {
				parent = parent[:strings.LastIndex(parent, "/")]
			}
			folded[key{k.pkg, parent}]++
		}
	}
	ndiff := 0
	for _, k := range keys {
		od, op := get(d, k), get(p, k)
		r := result{Type: "compat_result", Version: 1, RunID: *runID, Suite: *suite, Package: k.pkg, Test: k.test,
			Direct: od.status, Proxy: op.status, Same: od.status == op.status, DirectSec: od.elapsed, ProxySec: op.elapsed}
		switch {
		case k.test == "":
			r.Level = "package"
			sum.Packages.add(od.status, op.status)
		case strings.Contains(k.test, "/"):
			r.Level = "subtest"
			sum.Subtests.add(od.status, op.status)
		default:
			r.Level = "test"
			sum.Tests.add(od.status, op.status)
		}
		if !r.Same {
			r.DirectOutput, r.ProxyOutput = od.output, op.output
			ndiff++
			if !isFolded(k) {
				name := k.test
				if name == "" {
					name = "(package)"
				}
				note := ""
				if n := folded[k]; n > 0 {
					note = fmt.Sprintf(" (and %d subtests that ran on one side only)", n)
				}
				fmt.Fprintf(stdout, "%-9s %-8s %-7s -> %-7s %s %s%s\n", *suite, r.Level, r.Direct, r.Proxy, k.pkg, name, note)
			}
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := enc.Encode(sum); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	t := sum.Tests
	fmt.Fprintf(stdout, "%s: %d top-level tests: direct %d pass, %d fail, %d skip, %d other; through qprouter %d pass, %d fail, %d skip, %d other; %d differ\n",
		*suite, t.Seen, t.DirectPass, t.DirectFail, t.DirectSkip, t.DirectOther, t.ProxyPass, t.ProxyFail, t.ProxySkip, t.ProxyOther, t.Differences)
	s := sum.Subtests
	fmt.Fprintf(stdout, "%s: %d subtests: direct %d pass, %d fail, %d skip, %d other; through qprouter %d pass, %d fail, %d skip, %d other; %d differ\n",
		*suite, s.Seen, s.DirectPass, s.DirectFail, s.DirectSkip, s.DirectOther, s.ProxyPass, s.ProxyFail, s.ProxySkip, s.ProxyOther, s.Differences)
	if ndiff == 0 {
		fmt.Fprintf(stdout, "%s: no differences\n", *suite)
	}
	return nil
}

type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compat-compare:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
