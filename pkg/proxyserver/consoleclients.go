package proxyserver

import (
	"sync"
	"time"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

// consoleClients are the admin console's connected clients: the proxy
// does not see them (they have no pool), but SHOW CLIENTS and SHOW POOLS
// list them, and KILL_CLIENT closes them, as PgBouncer's console does.
type consoleClients struct {
	mu sync.Mutex
	m  map[*pgwire.Client]time.Time // when each logged in
}

type consoleClient struct {
	cl    *pgwire.Client
	since time.Time
}

func (cc *consoleClients) add(cl *pgwire.Client) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil {
		cc.m = make(map[*pgwire.Client]time.Time)
	}
	cc.m[cl] = time.Now()
}

func (cc *consoleClients) remove(cl *pgwire.Client) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	delete(cc.m, cl)
}

func (cc *consoleClients) count() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.m)
}

func (cc *consoleClients) list() []consoleClient {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	out := make([]consoleClient, 0, len(cc.m))
	for cl, t := range cc.m {
		out = append(out, consoleClient{cl, t})
	}
	return out
}

// kill closes the console client whose cancel key has process ID id;
// false when none has.
func (cc *consoleClients) kill(id uint32) bool {
	for _, c := range cc.list() {
		if c.cl.Key.PID == id {
			c.cl.Conn.Close()
			return true
		}
	}
	return false
}
