package route_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/route"
)

func TestPoolsByDatabaseAndUser(t *testing.T) {
	size := 3
	s := &route.Pools{
		Connect: func(context.Context, string, string) (*pgconn.PgConn, error) { return nil, nil },
		Config:  func(db, user string) pool.Config { return pool.Config{Size: size} },
	}
	defer s.Close()
	var r route.Router = s
	a, _ := r.Route(context.Background(), route.Request{Database: "d", User: "u"})
	b, _ := r.Route(context.Background(), route.Request{Database: "d", User: "u", SQL: "select 1"})
	c, _ := r.Route(context.Background(), route.Request{Database: "d", User: "v"})
	if a != b || a == c || a.Name() != "d/u" || c.Name() != "d/v" {
		t.Fatalf("pools: %v %v %v", a.Name(), b.Name(), c.Name())
	}
	if all := s.All(); len(all) != 2 || all[0] != a || all[1] != c {
		t.Fatalf("All: %v", all)
	}
	size = 5
	s.Reconfigure()
	if a.Stat().Size != 5 || c.Config().Size != 5 {
		t.Fatalf("after Reconfigure: %+v", a.Stat())
	}
}
