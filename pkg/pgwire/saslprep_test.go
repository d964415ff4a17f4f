package pgwire

import "testing"

// Passwords are prepared with SASLprep as PostgreSQL prepares them: the
// examples of RFC 4013, section 3, and verifiers PostgreSQL 15 itself
// stored (ALTER ROLE ... PASSWORD with password_encryption scram-sha-256)
// for passwords that SASLprep changes.
func TestSASLprep(t *testing.T) {
	for in, want := range map[string]string{
		"I\u00adX":     "IX",           // soft hyphen mapped to nothing
		"user":         "user",         // no transformation
		"USER":         "USER",         // case preserved
		"\u00aa":       "a",            // NFKC
		"\u2168":       "IX",           // NFKC
		"a\u00a0b":     "a b",          // a non-ASCII space to a space
		"\u0627\u0031": "\u0627\u0031", // bidi rule broken: refused, so the raw bytes
		"pass\ufb01wd": "passfiwd",
		"\xff\xfe":     "\xff\xfe", // not UTF-8: the raw bytes
	} {
		if got := normalizePassword(in); got != want {
			t.Errorf("normalizePassword(%q) = %q, want %q", in, got, want)
		}
	}
	for password, verifier := range map[string]string{
		"pass\ufb01word":  "SCRAM-SHA-256$4096:tSiEFMBMrKxa4aX+apjMTw==$vZs6KEbR/fP1NxtVJaXkoYQNiwpGEo/j4y9BfnqRGpc=:981/vJ8GJP/CeZA+7t6YmnM6UBjqPhYnGVzsKlhYkHA=",
		"I\u00adX\u00a0y": "SCRAM-SHA-256$4096:0HLD1RnsVA+GcqjfDTjYjA==$OVQ56syg33WpoKzfYbwE5S8cXYVuccGRNBW8wxWMxIQ=:Q6MS4zxNpeTyCrGhLT//p6sjf0Vx5DYcEbNNywppt/I=",
	} {
		if err := checkPlain("u", verifier, password); err != nil {
			t.Errorf("%q against PostgreSQL's verifier: %v", password, err)
		}
		if err := checkPlain("u", verifier, password+"x"); err == nil {
			t.Errorf("%q accepted against the verifier of %q", password+"x", password)
		}
	}
}
