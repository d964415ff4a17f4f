// The exact PostgreSQL -> DuckDB type mapping.

package copybin

import "fmt"

// DuckDBType is the DuckDB DDL type that holds every value of the column
// exactly. It refuses types that have no such type (unconstrained numeric,
// numeric wider than 38 digits, types the decoder does not know) with an
// error naming the column; Column.AsText is the explicit way around that.
func DuckDBType(c Column) (string, error) {
	p, err := planFor(c)
	if err != nil {
		return "", err
	}
	if p.kind == KindList {
		e, err := kindType(p.elem, p)
		if err != nil {
			return "", err
		}
		return e + "[]", nil
	}
	return kindType(p.kind, p)
}

func kindType(k Kind, p plan) (string, error) {
	switch k {
	case KindBool:
		return "BOOLEAN", nil
	case KindInt16:
		return "SMALLINT", nil
	case KindInt32:
		return "INTEGER", nil
	case KindInt64:
		return "BIGINT", nil
	case KindFloat32:
		return "FLOAT", nil
	case KindFloat64:
		return "DOUBLE", nil
	case KindDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", p.prec, p.scale), nil
	case KindText:
		return "VARCHAR", nil
	case KindJSON:
		return "JSON", nil
	case KindBytes:
		return "BLOB", nil
	case KindUUID:
		return "UUID", nil
	case KindDate:
		return "DATE", nil
	case KindTime:
		return "TIME", nil
	case KindTimestamp:
		return "TIMESTAMP", nil
	case KindTimestampTZ:
		return "TIMESTAMPTZ", nil
	case KindInterval:
		return "INTERVAL", nil
	case KindUint64:
		return "UBIGINT", nil
	case KindTimeTZ:
		return "TIMETZ", nil
	}
	return "", fmt.Errorf("no DuckDB type for kind %v", k)
}
