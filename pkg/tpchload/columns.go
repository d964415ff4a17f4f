// The DuckDB column types of each TPC-H table, derived from tpch.SchemaSQL.

package tpchload

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// column is one TPC-H column with its DuckDB type.
type column struct {
	name string
	// duck is the DuckDB type: INTEGER, BIGINT, DECIMAL(15,2), DATE or VARCHAR.
	duck string
	// trim is set for char(n) columns, whose values the copy stores without
	// trailing spaces.
	trim bool
}

var (
	tableRe  = regexp.MustCompile(`(?m)^CREATE TABLE (\w+) \(`)
	columnRe = regexp.MustCompile(`^\t(\w+) (\w+(?:\(\d+(?:,\d+)?\))?) NOT NULL,?$`)
)

// schemaColumns reads tpch.SchemaSQL so that the DuckDB tables follow the
// PostgreSQL ones column for column, with the copy's type mapping.
func schemaColumns() (map[string][]column, error) {
	out := map[string][]column{}
	locs := tableRe.FindAllStringSubmatchIndex(tpch.SchemaSQL, -1)
	for i, loc := range locs {
		name := tpch.SchemaSQL[loc[2]:loc[3]]
		end := len(tpch.SchemaSQL)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		for _, line := range strings.Split(tpch.SchemaSQL[loc[1]:end], "\n") {
			m := columnRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			c, err := mapColumn(m[1], m[2])
			if err != nil {
				return nil, fmt.Errorf("table %s: %w", name, err)
			}
			out[name] = append(out[name], c)
		}
	}
	for _, t := range tpch.Tables {
		if len(out[t.String()]) == 0 {
			return nil, fmt.Errorf("no columns found for table %s in tpch.SchemaSQL", t)
		}
	}
	return out, nil
}

// mapColumn maps a PostgreSQL column type to the copy's DuckDB type.
func mapColumn(name, pgType string) (column, error) {
	switch {
	case pgType == "integer" || pgType == "bigint" || pgType == "date":
		return column{name: name, duck: strings.ToUpper(pgType)}, nil
	case strings.HasPrefix(pgType, "decimal("):
		return column{name: name, duck: "DECIMAL" + strings.TrimPrefix(pgType, "decimal")}, nil
	case strings.HasPrefix(pgType, "char("):
		return column{name: name, duck: "VARCHAR", trim: true}, nil
	case strings.HasPrefix(pgType, "varchar("):
		return column{name: name, duck: "VARCHAR"}, nil
	}
	return column{}, fmt.Errorf("column %s: unmapped type %s", name, pgType)
}
