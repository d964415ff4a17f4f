// User name maps: pg_ident.conf's format, for the map= option of peer and cert lines.

package hba

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Idents are the user name maps of an ident file: which system user (the
// operating-system user of a peer client, the common name of a client
// certificate) may log in as which database user.
type Idents struct {
	File string
	maps map[string][]identLine
}

// identLine is one line: a system user, literal or /regex, and the
// database user, where \1 stands for the regex's first group.
type identLine struct {
	system string
	re     *regexp.Regexp
	dbUser string
}

// LoadIdent reads the maps of the file at path.
func LoadIdent(path string) (*Idents, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ident file: %w", err)
	}
	defer f.Close()
	return ParseIdent(f, path)
}

// ParseIdent reads maps in pg_ident.conf's format from r (path names the
// file in errors): MAPNAME SYSTEM-USERNAME DATABASE-USERNAME a line, a
// system user starting with a slash being a regular expression.
func ParseIdent(r io.Reader, path string) (*Idents, error) {
	lines, err := logicalLines(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &Idents{File: path, maps: make(map[string][]identLine)}
	for _, l := range lines {
		fields, err := tokenize(l.text)
		if err == nil && len(fields) > 0 {
			err = m.line(fields)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, l.n, err)
		}
	}
	return m, nil
}

func (m *Idents) line(fields [][]token) error {
	if len(fields) != 3 {
		return fmt.Errorf("want MAPNAME SYSTEM-USERNAME DATABASE-USERNAME, got %d fields", len(fields))
	}
	for _, f := range fields {
		if len(f) != 1 {
			return errors.New("multiple values in ident field")
		}
	}
	l := identLine{system: fields[1][0].text, dbUser: fields[2][0].text}
	if rest, ok := strings.CutPrefix(l.system, "/"); ok {
		re, err := regexp.Compile(rest)
		if err != nil {
			return fmt.Errorf("invalid regular expression %q: %w", rest, err)
		}
		if strings.Contains(l.dbUser, `\1`) && re.NumSubexp() < 1 {
			return fmt.Errorf("regular expression %q has no subexpressions as requested by backreference in %q", rest, l.dbUser)
		}
		l.re = re
	}
	name := fields[0][0].text
	m.maps[name] = append(m.maps[name], l)
	return nil
}

// Has reports whether the file defines map name.
func (m *Idents) Has(name string) bool { return len(m.maps[name]) > 0 }

// Allows reports whether map name lets system log in as dbUser: a line
// whose system user is system (or whose regex matches it) and whose
// database user, \1 replaced by the regex's first group, is dbUser. Names
// compare exactly, as in PostgreSQL.
func (m *Idents) Allows(name, system, dbUser string) bool {
	for _, l := range m.maps[name] {
		if l.re == nil {
			if l.system == system && l.dbUser == dbUser {
				return true
			}
			continue
		}
		sub := l.re.FindStringSubmatchIndex(system)
		if sub == nil {
			continue
		}
		want := l.dbUser
		if strings.Contains(want, `\1`) {
			group := ""
			if sub[2] >= 0 {
				group = system[sub[2]:sub[3]]
			}
			want = strings.Replace(want, `\1`, group, 1)
		}
		if want == dbUser {
			return true
		}
	}
	return false
}
