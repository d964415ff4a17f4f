// Review of ff2efc2 (safesql: the file-reading system views refused by
// RangeVar).

package safesql

import "testing"

// A CTE's name hides a catalog relation of the same name in PostgreSQL
// ("WITH pg_file_settings AS (SELECT 1 AS x) SELECT x FROM
// pg_file_settings" answers 1 and reads no file). checkRelation does not
// track the CTE names in scope, so such a query is refused; kept on
// purpose (docs/safesql.md): a false refusal of a contrived name costs
// little, and scope tracking in both walkers would be a new way to get
// the check wrong. Both walkers refuse it alike.
func TestDiff13ReviewCTENamedLikeFileViewRefusedOnPurpose(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"WITH pg_file_settings AS (SELECT 1 AS x) SELECT x FROM pg_file_settings",
		"WITH pg_hba_file_rules(line_number) AS (VALUES (1)) SELECT line_number FROM pg_hba_file_rules",
	} {
		if err := v.Validate(sql); err == nil {
			t.Errorf("%s: allowed; the conservative rule refuses a bare name of a file-reading view, even a CTE's", sql)
		}
	}
}
