// Examples of the normalized text, run as tests.

package digest_test

import (
	"fmt"
	"time"

	"github.com/qpkit/qpkit/pkg/digest"
)

func ExampleNormalize() {
	for _, sql := range []string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = 81714;",
		"select abalance from pgbench_accounts where aid = $1",
		"SELECT * FROM t WHERE id IN (1, 2, 3) AND name = E'O\\'Brien' -- c",
		"INSERT INTO t (a, b) VALUES (1, 'x'), (2, 'y') RETURNING id",
		"select a - 1, -1, '2024-01-01'::date from t order by 1 limit 10",
	} {
		text, fp := digest.Normalize(sql)
		fmt.Printf("%016x %s\n", fp, text)
	}
	// Output:
	// aa4f6a7b3fccb935 select abalance from pgbench_accounts where aid = $1
	// aa4f6a7b3fccb935 select abalance from pgbench_accounts where aid = $1
	// dae92e7c79710163 select * from t where id in ($1) and name = $2
	// 469ba8873f061f11 insert into t(a, b) values ($1, $2) returning id
	// 07132da637d9d502 select a - $1, $2, $3::date from t order by 1 limit $4
}

func ExampleStore() {
	s := digest.NewStore(100)
	s.Observe("main", "primary", "SELECT 1", 2*time.Millisecond, 1, "")
	s.Observe("main", "primary", "select 2", 4*time.Millisecond, 1, "57014")
	shapes, _ := s.Snapshot()
	for _, sh := range shapes {
		fmt.Println(sh.Query, sh.Calls, sh.Errors, time.Duration(sh.TotalNs), time.Duration(sh.MaxNs))
	}
	// Output:
	// select $1 2 1 6ms 4ms
}
