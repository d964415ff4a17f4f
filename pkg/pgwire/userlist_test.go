package pgwire

import (
	"strings"
	"testing"
)

func TestReadUserList(t *testing.T) {
	u, err := ReadUserList(strings.NewReader("; comment\n\n\"alice\" \"pw\"\"x\"\n\"bob\" \"md5aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n# c\n"), "u.txt")
	if err != nil {
		t.Fatal(err)
	}
	if u["alice"].Password != `pw"x` || u["alice"].Plaintext() != `pw"x` || u["bob"].Plaintext() != "" {
		t.Errorf("userlist: %#v", u)
	}
	if u["alice"].Method != AuthSCRAM || u["bob"].Method != AuthMD5 {
		t.Errorf("methods: %#v", u)
	}
	if v := (Credential{Password: SCRAMVerifier("pw")}); v.Plaintext() != "" {
		t.Errorf("SCRAM verifier as plaintext: %q", v.Plaintext())
	}
	_, err = ReadUserList(strings.NewReader("\"alice\" secret\n"), "users.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "users.txt:1: ") {
		t.Errorf("unquoted secret: %v", err)
	}
	_, err = ReadUserList(strings.NewReader("\"ok\" \"x\"\n\"alice\n"), "users.txt")
	if err == nil || !strings.Contains(err.Error(), "users.txt:2: unterminated quote") {
		t.Errorf("unterminated: %v", err)
	}
}
