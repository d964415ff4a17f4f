// Review of 8f4f822 (route: each host of a multi-host URL gets its share
// of the acquire timeout for its TLS and plain tries together): asserts
// the documented behaviour.

package route

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// docs/qprouter.md: "each host gets an equal share of the acquire
// timeout, at least 250 ms, for its TLS and plain tries together, so a
// host that accepts and then stays silent cannot use it all up".
// bindAttempts sets pgconn's ConnectTimeout to acquire/hosts, but pgconn
// (connectPreferred) starts a timer for every resolved address, and a
// new one each time the address changes: a host name with two addresses
// (two A records, or A and AAAA) under sslmode=prefer is tried as
// addr1-TLS, addr2-TLS, addr1-plain, addr2-plain, four timers of
// acquire/2 each. A silent first host then takes the whole acquire
// timeout (and more) and the live second host is never tried. The two
// addresses come from the host name's resolver (LookupFunc stands in
// for DNS here).
func TestDiff11ReviewSilentHostWithTwoAddressesUsesWholeAcquireTimeout(t *testing.T) {
	c := rvCluster(t)
	const acquire = 3 * time.Second
	a1, a2 := silentHost(t).String(), silentHost(t).String()
	url := fmt.Sprintf("postgres://postgres@silent.test:5432,127.0.0.1:%d/postgres?load_balance_hosts=disable", c.Port)
	tgs, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := tgs.For("app")
	if err != nil {
		t.Fatal(err)
	}
	tg.cfg.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
		if host == "silent.test" {
			return []string{a1, a2}, nil // a name with two addresses
		}
		return net.DefaultResolver.LookupHost(ctx, host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquire)
	defer cancel()
	start := time.Now()
	pc, err := tgs.Connector(nil)(ctx, "app", "postgres")
	if err != nil {
		t.Fatalf("connect through %s failed after %s: %v; want the silent first host to give way after its half "+
			"of the %s acquire timeout and the second host to serve", url, time.Since(start).Round(10*time.Millisecond), err, acquire)
	}
	pc.Close(context.Background())
}
