package proxyserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func valid() Config {
	return Config{Listen: "127.0.0.1:0", ServerURL: "postgres://x@127.0.0.1:1/x", PoolMode: "session", PoolSize: 2,
		AcquireTimeout: time.Second, IdleTimeout: time.Second, MaxLifetime: time.Second, HealthCheckAfter: time.Second,
		ReservePoolTimeout: time.Second, PreparedPerServer: 1, ShutdownTimeout: time.Second, LogLevel: "info"}
}

func TestCheck(t *testing.T) {
	if c := valid(); c.Check() != nil {
		t.Fatalf("valid config refused: %v", c.Check())
	}
	for name, edit := range map[string]func(*Config){
		"server-url": func(c *Config) { c.ServerURL = "" },
		"mode":       func(c *Config) { c.PoolMode = "batch" },
		"pool-size":  func(c *Config) { c.PoolSize = 0 },
		"min-idle":   func(c *Config) { c.MinIdle = -1 },
		"timeouts":   func(c *Config) { c.IdleTimeout = 0 },
		"tls-key":    func(c *Config) { c.TLSCert = "c.pem" },
		"tls":        func(c *Config) { c.RequireTLS = true },
		"client-ca":  func(c *Config) { c.TLSCert, c.TLSKey, c.RequireClientCert = "c.pem", "k.pem", true },
		"sock-group": func(c *Config) { c.UnixSocketGroup = "0" },
		"ident":      func(c *Config) { c.AuthIdentFile = "pg_ident.conf" },
		"auth-type":  func(c *Config) { c.AuthType = "scram-sha-256" }, // without secrets
		"auth-hba":   func(c *Config) { c.AuthType, c.AuthFile, c.AuthHBAFile = "plain", "users.txt", "hba.conf" },
		"auth-bad":   func(c *Config) { c.AuthType = "cert" },
		"bad-group": func(c *Config) {
			c.UnixSocketDir, c.UnixSocketMode, c.UnixSocketGroup = "/tmp", "0777", "no-such-group-qpkit"
		},
		"prepared":  func(c *Config) { c.PreparedPerServer = 0 },
		"reserve":   func(c *Config) { c.ReservePoolTimeout = 0 },
		"max-db":    func(c *Config) { c.MaxDBConnections = -1 },
		"max-user":  func(c *Config) { c.MaxUserConnections = -1 },
		"reserve-n": func(c *Config) { c.ReservePoolSize = -1 },
	} {
		c := valid()
		edit(&c)
		var ce *ConfigError
		if err := c.Check(); !errors.As(err, &ce) {
			t.Errorf("%s: %v, want a *ConfigError", name, err)
		}
	}
}

func TestNewBadAuthFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users.txt")
	if err := os.WriteFile(p, []byte("\"alice\" secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := valid()
	c.AuthFile = p
	_, err := New(Options{Config: c})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "auth file: "+p+":1: ") {
		t.Errorf("bad auth file: %v", err)
	}
}

func TestTOMLResolver(t *testing.T) {
	if _, err := TOMLResolver(strings.NewReader("pool_size = 8\nacquire_timeout = \"5s\"\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := TOMLResolver(strings.NewReader("pool_size = \n")); err == nil || !strings.HasPrefix(err.Error(), "config file: ") {
		t.Errorf("bad TOML: %v", err)
	}
}
