package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromiumPath is Debian's package binary, which scripts/test-browser
// installs; PERFHTML_CHROMIUM names another.
func chromiumPath() string {
	if p := os.Getenv("PERFHTML_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// browserIDs are the element ids the fixture's page must have in the DOM
// Chromium built (pkg/perf's unit test checks the rendered text).
var browserIDs = []string{
	"provenance", "pg-settings", "queries",
	"latency", "latency-select1", "latency-q06", "latency-chart-select1", "latency-chart-q06",
	"sweep", "throughput", "throughput-select1", "throughput-q06",
	"latency-vs-concurrency", "latency-vs-concurrency-select1", "latency-vs-concurrency-q06",
	"decomp", "decomp-chart", "decomp-table",
	"overhead", "tdb", "js-errors", "js-ok",
}

// fixtureCharts is how many <svg class="chart"> the fixture's page has.
const fixtureCharts = 7

// needBrowser skips the test when Chromium is missing, or fails it when
// PERFHTML_REQUIRE_BROWSER=1.
func needBrowser(t *testing.T) {
	t.Helper()
	chromium := chromiumPath()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("PERFHTML_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s is missing and PERFHTML_REQUIRE_BROWSER=1; install Debian's 'chromium' package (scripts/test-browser does)", chromium)
		}
		t.Skipf("%s is missing: install Debian's 'chromium' package (or run scripts/test-browser) to run the browser test", chromium)
	}
}

// loadPage opens file in headless Chromium and returns the DOM after the
// load event and the console lines Chromium logged.
func loadPage(t *testing.T, file string) (dom string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath(),
		"--headless=new", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"),
		"--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+file)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	for _, line := range strings.Split(errb.String(), "\n") {
		// Page console messages, uncaught exceptions included, are logged as
		// ":CONSOLE(line)]" or ":CONSOLE:line]"; the rest is browser noise
		// (no D-Bus, no GPU in a container).
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, line)
		}
	}
	return out.String(), console
}

var (
	domID     = regexp.MustCompile(`\bid="([^"]+)"`)
	jsErrors  = regexp.MustCompile(`(?s)<pre id="js-errors">(.*?)</pre>`)
	jsOK      = regexp.MustCompile(`<div id="js-ok"[^>]*data-svgs="(\d+)"`)
	svgChart  = regexp.MustCompile(`<svg [^>]*class="chart"`)
	svgShapes = []string{"<rect ", "<line ", "<polyline ", "<circle ", "<path ", "<text ", "<title>"}
)

func renderFixture(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "perf.html")
	if code, _, msg := call(t, "", fixture, "-o", file); code != 0 {
		t.Fatalf("perfhtml: exit %d: %s", code, msg)
	}
	return file
}

func TestBrowser(t *testing.T) {
	needBrowser(t)
	dom, console := loadPage(t, renderFixture(t))
	for _, l := range console {
		t.Errorf("console: %s", l)
	}
	m := jsErrors.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no #js-errors in the DOM:\n%.2000s", dom)
	}
	if strings.TrimSpace(m[1]) != "" {
		t.Errorf("script errors on the page:\n%s", m[1])
	}
	ok := jsOK.FindStringSubmatch(dom)
	if ok == nil {
		t.Fatal("no #js-ok: the page's load handler did not run")
	}
	if n, _ := strconv.Atoi(ok[1]); n != fixtureCharts {
		t.Errorf("the browser laid out %d charts with a size, want %d", n, fixtureCharts)
	}
	ids := map[string]bool{}
	for _, m := range domID.FindAllStringSubmatch(dom, -1) {
		ids[m[1]] = true
	}
	for _, id := range browserIDs {
		if !ids[id] {
			t.Errorf("id %q missing from the DOM", id)
		}
	}
	if n := len(svgChart.FindAllString(dom, -1)); n != fixtureCharts {
		t.Errorf("%d SVG charts in the DOM, want %d", n, fixtureCharts)
	}
	for _, s := range svgShapes {
		if !strings.Contains(dom, s) {
			t.Errorf("no %s element in the DOM", strings.Trim(s, "< >"))
		}
	}
}

// The checks above must be able to fail: a page with a script error, a
// console message and a network fetch is caught three ways.
func TestBrowserCatchesErrors(t *testing.T) {
	needBrowser(t)
	file := renderFixture(t)
	page, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(page), "</body>",
		`<script>console.error("probe-console"); throw new Error("probe-boom")</script><img src="http://127.0.0.1:9/probe.png"></body>`, 1)
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := loadPage(t, file)
	m := jsErrors.FindStringSubmatch(dom)
	if m == nil || !strings.Contains(m[1], "probe-boom") || !strings.Contains(m[1], "probe.png") {
		t.Errorf("#js-errors did not record the thrown error and the blocked fetch: %q", m)
	}
	all := strings.Join(console, "\n")
	if !strings.Contains(all, "probe-console") || !strings.Contains(all, "Uncaught") {
		t.Errorf("console lines miss the probe's message or exception:\n%s", all)
	}
}
