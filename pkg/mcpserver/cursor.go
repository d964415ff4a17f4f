// run_select's continuation cursors: opaque, signed, bound to one statement and its params.

package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"github.com/qpkit/qpkit/pkg/pgexec"
)

// cursorKeys signs cursors with a key made at New, so a cursor is valid
// only in the process that issued it and cannot be forged or edited.
type cursorKeys struct{ key [32]byte }

func newCursorKeys() *cursorKeys {
	k := &cursorKeys{}
	if _, err := rand.Read(k.key[:]); err != nil {
		panic("mcpserver: no randomness for the cursor key: " + err.Error())
	}
	return k
}

// cursorBody is what a cursor says: which statement and params it
// continues (as hashes) and how many rows earlier pages returned.
type cursorBody struct {
	SQL    string `json:"q"`
	Params string `json:"p"`
	Offset int    `json:"o"`
}

// errCursor is the isError text of a cursor that does not verify.
var errCursor = errors.New("invalid cursor: pass back the cursor string from a previous run_select result unchanged, within the same server process")

// errCursorMismatch is the isError text of a cursor used with other sql or params.
var errCursorMismatch = errors.New("cursor belongs to a different sql or params: repeat the exact sql and params of the call that returned it")

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// statementHashes hashes the statement text and its params.
func statementHashes(sql string, params []any) (string, string) {
	raw, _ := json.Marshal(params) // params came from JSON
	return hashOf([]byte(sql)), hashOf(raw)
}

func (k *cursorKeys) mac(body []byte) []byte {
	m := hmac.New(sha256.New, k.key[:])
	m.Write(body)
	return m.Sum(nil)
}

// issue returns the cursor for the page starting at offset.
func (k *cursorKeys) issue(sql string, params []any, offset int) string {
	q, p := statementHashes(sql, params)
	body, _ := json.Marshal(cursorBody{SQL: q, Params: p, Offset: offset})
	return base64.RawURLEncoding.EncodeToString(body) + "." + base64.RawURLEncoding.EncodeToString(k.mac(body))
}

// offset verifies cursor and returns its offset; the cursor must have been
// issued for the same sql and params.
func (k *cursorKeys) offset(cursor, sql string, params []any) (int, error) {
	b64, m64, ok := strings.Cut(cursor, ".")
	if !ok {
		return 0, errCursor
	}
	body, err1 := base64.RawURLEncoding.DecodeString(b64)
	mac, err2 := base64.RawURLEncoding.DecodeString(m64)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, k.mac(body)) {
		return 0, errCursor
	}
	var c cursorBody
	if err := json.Unmarshal(body, &c); err != nil || c.Offset < 0 {
		return 0, errCursor
	}
	q, p := statementHashes(sql, params)
	if c.SQL != q || c.Params != p {
		return 0, errCursorMismatch
	}
	return c.Offset, nil
}

// withCursor adds the cursor to a result document, reusing doc's memory:
// JSON gets a "cursor" member, TSV's footer "(N rows, truncated by rows)"
// becomes "(N rows, truncated by rows; cursor: C)". The cursor is base64url
// and '.', so neither format needs escaping.
func withCursor(doc []byte, cursor string, f pgexec.Format) []byte {
	end, before, after := byte('}'), `,"cursor":"`, `"}`
	if f == pgexec.FormatTSV {
		end, before, after = ')', "; cursor: ", ")"
	}
	if len(doc) == 0 || doc[len(doc)-1] != end {
		return doc
	}
	doc = append(doc[:len(doc)-1], before...)
	doc = append(doc, cursor...)
	return append(doc, after...)
}
