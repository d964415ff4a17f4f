package connstr

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://bob:s3cret@db:5432/app?sslmode=disable", "postgres://bob:xxxxx@db:5432/app?sslmode=disable"},
		{"postgresql://bob:p%40ss%2Fw0rd@db/app", "postgresql://bob:xxxxx@db/app"},
		{"postgres://bob:p@ss@db/app", "postgres://bob:xxxxx@db/app"},
		{"postgres://bob:pw@%2Fvar%2Frun%2Fpostgresql/tpch", "postgres://bob:xxxxx@%2Fvar%2Frun%2Fpostgresql/tpch"},
		{"postgres://bob:pw@db1:5432,db2/tpch", "postgres://bob:xxxxx@db1:5432,db2/tpch"},
		{"postgres://bob@db/app?password=pw&sslpassword=k3y&application_name=x", "postgres://bob@db/app?password=xxxxx&sslpassword=xxxxx&application_name=x"},
		{"postgres://bob@db/app", "postgres://bob@db/app"},
		{"postgres://db?Password=pw", "postgres://db?Password=xxxxx"},
		{"host=db user=bob password=s3cret dbname=app", "host=db user=bob password=xxxxx dbname=app"},
		{"host=db password = 'it\\'s s3cret' dbname=app", "host=db password = xxxxx dbname=app"},
		{"host=db password=two\\ w0rds dbname=app", "host=db password=xxxxx dbname=app"},
		{"host=db sslpassword=k3y PASSWORD=pw", "host=db sslpassword=xxxxx PASSWORD=xxxxx"},
		{"-n", "-n"},
		{"postgres://db?application_name=a@b&password=s3cret", "postgres://db?application_name=a@b&password=xxxxx"},
		{"postgres://bob:pa?ss@db/app", "postgres://bob:xxxxx@db/app"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
		for _, secret := range []string{"s3cret", "p%40ss", "k3y", "w0rds"} {
			if strings.Contains(Redact(c.in), secret) {
				t.Errorf("Redact(%q) keeps %q", c.in, secret)
			}
		}
	}
}
