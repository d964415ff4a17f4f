package proxyserver

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// PAUSE closes the paused pools' idle server connections "without opening
// others (connections opened again on demand after RESUME), as PgBouncer's
// PAUSE, which is there for a restart of the database" (docs/qprouter.md,
// SHOW/PAUSE table). With --min-idle set, the pool's janitor opens
// min-idle connections again within a second of the PAUSE, while the pool
// is still paused: the database restart waits on them again. PgBouncer
// launches no connection for a paused pool (janitor.c per_loop_pause).
func TestTodayReviewPauseMinIdleReopens(t *testing.T) {
	cl := pgtest.Shared(t)
	ctx := context.Background()
	admin := pgxConnect(t, cl.URL())
	admin.Exec(ctx, "drop database if exists zzd2pause with (force)")
	if _, err := admin.Exec(ctx, "create database zzd2pause"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "drop database if exists zzd2pause with (force)") })
	_, addr, _ := rvServe(t, "transaction", func(c *Config) { c.MinIdle = 2 })
	backends := func() int {
		return countForTest(t, cl.URL(), "select count(*) from pg_stat_activity where datname = 'zzd2pause'")
	}
	cn, err := pgx.Connect(ctx, "postgres://postgres@"+addr+"/zzd2pause?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cn.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	cn.Close(ctx)
	con := opsConsole(t, addr)
	opsShow(t, con, "PAUSE")
	defer opsShow(t, con, "RESUME")
	if n := backends(); n != 0 {
		t.Fatalf("right after PAUSE: %d backends of the paused pool, want 0", n)
	}
	time.Sleep(2500 * time.Millisecond) // the janitor ticks every second
	if n := backends(); n != 0 {
		t.Errorf("2.5 s into the PAUSE: %d backends connected to the paused pool's database, want 0 (PAUSE is for a database restart; PgBouncer opens none while paused)", n)
	}
}
