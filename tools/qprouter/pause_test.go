package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// POST /api/pause?pool=db/user pauses that pool only: a query there waits
// until /api/resume while another pool answers; an unknown pool is 404.
func TestPausePoolAPI(t *testing.T) {
	c := pgtest.Shared(t)
	adminAddr := freeAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	addrc := make(chan string, 1)
	codec := make(chan int, 1)
	var logs syncBuf
	go func() {
		codec <- run(ctx, []string{"--server-url", c.URL(), "--listen", "127.0.0.1:0", "--admin", adminAddr,
			"--pool-mode", "transaction", "--acquire-timeout", "10s"}, &logs, &logs, nil, func(a string) { addrc <- a })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case code := <-codec:
		t.Fatalf("exited %d: %s", code, logs.String())
	}
	bg := context.Background()
	conn := func(db string) *pgx.Conn {
		cn, err := pgx.Connect(bg, "postgres://postgres@"+addr+"/"+db+"?sslmode=disable")
		if err != nil {
			t.Fatalf("connect %s: %v\n%s", db, err, logs.String())
		}
		t.Cleanup(func() { cn.Close(bg) })
		return cn
	}
	a, b := conn("postgres"), conn("template1")
	api := "http://" + adminAddr + "/api/"
	post := func(path string) int {
		t.Helper()
		resp, err := http.Post(api+path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	paused := func() map[string]bool {
		var pools struct {
			Pools []struct {
				Name   string `json:"name"`
				Paused bool   `json:"paused"`
			} `json:"pools"`
		}
		getJSON(t, api+"pools", &pools)
		m := map[string]bool{}
		for _, p := range pools.Pools {
			m[p.Name] = p.Paused
		}
		return m
	}

	if code := post("pause?pool=postgres/postgres"); code != http.StatusOK {
		t.Fatalf("pause: %d", code)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Exec(bg, "select 1")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("query on the paused pool ran: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	var n int
	if err := b.QueryRow(bg, "select 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("other pool while one is paused: %d %v", n, err)
	}
	if p := paused(); !p["postgres/postgres"] || p["template1/postgres"] {
		t.Errorf("GET /api/pools paused: %v", p)
	}
	if code := post("resume?pool=postgres/postgres"); code != http.StatusOK {
		t.Fatalf("resume: %d", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after resume: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("query still waiting after resume")
	}
	if p := paused(); p["postgres/postgres"] {
		t.Errorf("still paused after resume: %v", p)
	}
	for _, path := range []string{"pause?pool=nope/postgres", "resume?pool=nope/postgres"} {
		if code := post(path); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, code)
		}
	}
	stop()
	if code := <-codec; code != exitOK {
		t.Fatalf("exit %d", code)
	}
}
