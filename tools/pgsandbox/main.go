// Command pgsandbox starts, finds and stops throwaway PostgreSQL clusters
// from the shell; scripts/pg-sandbox wraps it.
//
// Exit codes: 0 success, 1 the operation failed, 2 bad usage.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

type globals struct {
	Name     string `help:"Sandbox name, so several can run side by side." default:"default"`
	StateDir string `help:"Directory remembering running sandboxes." env:"PGSANDBOX_STATE_DIR" type:"path"`
}

type cli struct {
	globals
	Start startCmd `cmd:"" help:"Start a sandbox and print its postgres:// URL."`
	Stop  stopCmd  `cmd:"" help:"Stop a sandbox and delete its directory."`
	URL   urlCmd   `cmd:"" name:"url" help:"Print a running sandbox's URL."`
	Psql  psqlCmd  `cmd:"" help:"Run psql against a sandbox; arguments after -- go to psql."`
}

type env struct {
	stdout, stderr io.Writer
}

type startCmd struct {
	MaxConnections int      `help:"max_connections."`
	SharedBuffers  string   `help:"shared_buffers, e.g. 1GB."`
	WALLevel       string   `name:"wal-level" help:"wal_level, e.g. logical."`
	Set            []string `help:"Any setting as name=value; repeatable (a value may hold commas: search_path=a,b)." placeholder:"NAME=VALUE" sep:"none"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

func (g *globals) statePath() (string, error) {
	if !nameRE.MatchString(g.Name) {
		return "", usageError{fmt.Sprintf("--name %q: use letters, digits, '.', '_' or '-'", g.Name)}
	}
	dir := g.StateDir
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --state-dir and no home directory: %w", err)
		}
		dir = filepath.Join(home, ".local", "state", "qpkit", "pgsandbox")
	}
	return filepath.Join(dir, g.Name), nil
}

// open finds the running sandbox recorded under the name.
func (g *globals) open() (*pgtest.Cluster, string, error) {
	path, err := g.statePath()
	if err != nil {
		return nil, "", err
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, path, fmt.Errorf("no sandbox named %q is running (no %s)", g.Name, path)
	}
	if err != nil {
		return nil, path, err
	}
	c, err := pgtest.Open(strings.TrimSpace(string(raw)))
	return c, path, err
}

// openAlive is open for a sandbox whose server is running.
func (g *globals) openAlive() (*pgtest.Cluster, error) {
	c, _, err := g.open()
	if err != nil {
		return nil, err
	}
	if !c.Alive() {
		return nil, fmt.Errorf("sandbox %q is recorded but its server is not running; run stop to forget it", g.Name)
	}
	return c, nil
}

func (s *startCmd) Run(g *globals, e env) error {
	path, err := g.statePath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	// One start per name at a time: the check below and the state written
	// at the end are one step for other starts.
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("sandbox %q is being started by another process", g.Name)
	}
	if c, _, err := g.open(); err == nil {
		if c.Alive() {
			return fmt.Errorf("sandbox %q is already running at %s; stop it first", g.Name, c.URL())
		}
		c.Stop() // its server died (a reboot, the OOM killer): forgotten
		os.Remove(path)
	}
	opts := pgtest.Options{MaxConnections: s.MaxConnections, SharedBuffers: s.SharedBuffers, WALLevel: s.WALLevel, Detached: true, Settings: map[string]string{}}
	for _, kv := range s.Set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usageError{fmt.Sprintf("--set %q: want NAME=VALUE", kv)}
		}
		opts.Settings[k] = v
	}
	// Ctrl-C or SIGTERM while the cluster starts: let the start finish
	// (initdb and pg_ctl run in their own process group), then remove it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	c, err := pgtest.StartCluster(opts)
	if err != nil {
		return err
	}
	select {
	case sig := <-sigs:
		c.Stop()
		return fmt.Errorf("interrupted (%v): the sandbox was removed", sig)
	default:
	}
	if err := os.WriteFile(path, []byte(c.Base+"\n"), 0o644); err != nil {
		c.Stop()
		return fmt.Errorf("remember sandbox: %w", err)
	}
	fmt.Fprintln(e.stdout, c.URL())
	return nil
}

type stopCmd struct{}

func (stopCmd) Run(g *globals) error {
	c, path, err := g.open()
	if err != nil {
		if path != "" {
			os.Remove(path) // forget a sandbox whose directory is gone
		}
		return err
	}
	if err := c.Stop(); err != nil {
		return err
	}
	return os.Remove(path)
}

type urlCmd struct{}

func (urlCmd) Run(g *globals, e env) error {
	c, err := g.openAlive()
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, c.URL())
	return nil
}

type psqlCmd struct {
	Args []string `arg:"" optional:"" passthrough:"" help:"psql arguments."`
}

func (p *psqlCmd) Run(g *globals, e env) error {
	c, err := g.openAlive()
	if err != nil {
		return err
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		psql = filepath.Join(c.BinDir, "psql")
	}
	args := p.Args
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	cmd := exec.Command(psql, append([]string{"--dbname", c.URL()}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.stdout, e.stderr
	return cmd.Run()
}

// usageError marks mistakes in the command line (exit 2).
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

func run(args []string, stdout, stderr io.Writer) int {
	var c cli
	exit := -1
	parser, err := kong.New(&c, kong.Name("pgsandbox"),
		kong.Description("Throwaway PostgreSQL clusters for the shell."),
		kong.Writers(stdout, stderr), kong.Exit(func(code int) { exit = code }))
	if err != nil {
		fmt.Fprintln(stderr, "pgsandbox:", err)
		return 1
	}
	ctx, err := parser.Parse(args)
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintln(stderr, "pgsandbox:", err)
		return 2
	}
	if err := ctx.Run(&c.globals, env{stdout, stderr}); err != nil {
		fmt.Fprintln(stderr, "pgsandbox:", err)
		var ue usageError
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ue):
			return 2
		case errors.As(err, &ee):
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
