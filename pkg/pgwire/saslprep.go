package pgwire

import (
	"unicode/utf8"

	"github.com/xdg-go/stringprep"
	"golang.org/x/text/unicode/norm"
)

// normalizePassword is SASLprep (RFC 4013) step for step as PostgreSQL's
// pg_saslprep (src/common/saslprep.c) applies it, so that a verifier
// PostgreSQL built, or a libpq client's proof, agrees with ours. That is
// not the RFC's order, which a stringprep library follows: PostgreSQL
// maps (non-ASCII spaces to spaces, "commonly mapped to nothing"
// characters dropped), refuses an empty result, checks the mapped code
// points (prohibited, unassigned, bidirectional rules), and only then
// normalizes to NFKC. ASCII is kept as it is, and the raw bytes are used
// when the password is not valid UTF-8 or a check refuses it.
func normalizePassword(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii || !utf8.ValidString(p) {
		return p
	}
	mapped := make([]rune, 0, len(p))
	for _, r := range p {
		if stringprep.TableC1_2.Contains(r) {
			mapped = append(mapped, ' ')
		} else if _, nothing := stringprep.TableB1.Map(r); !nothing && r != 0x1806 {
			// U+1806 MONGOLIAN TODO SOFT HYPHEN is in StringPrep's B.1 and
			// pg_saslprep's table, not in the library's.
			mapped = append(mapped, r)
		}
	}
	if len(mapped) == 0 {
		return p // "don't allow empty password"
	}
	randAL := false
	for _, r := range mapped {
		if saslProhibited(r) {
			return p
		}
		randAL = randAL || stringprep.TableD1.Contains(r)
	}
	if randAL {
		for _, r := range mapped {
			if stringprep.TableD2.Contains(r) {
				return p
			}
		}
		if !stringprep.TableD1.Contains(mapped[0]) || !stringprep.TableD1.Contains(mapped[len(mapped)-1]) {
			return p
		}
	}
	return norm.NFKC.String(string(mapped))
}

// saslProhibited: pg_saslprep's prohibited output (StringPrep C.1.2,
// C.2.1-C.9) and unassigned code points (A.1).
func saslProhibited(r rune) bool {
	for _, t := range saslProhibitedTables {
		if t.Contains(r) {
			return true
		}
	}
	return false
}

var saslProhibitedTables = []stringprep.Set{stringprep.TableA1, stringprep.TableC1_2, stringprep.TableC2_1,
	stringprep.TableC2_2, stringprep.TableC3, stringprep.TableC4, stringprep.TableC5, stringprep.TableC6,
	stringprep.TableC7, stringprep.TableC8, stringprep.TableC9}
