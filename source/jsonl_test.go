package source

import (
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
)

// jsonlCases are the loader's rules on top of the scanner's JSON; they
// also seed FuzzJSONLine.
var jsonlCases = []loadCase{
	{name: "escapes everywhere", in: `{"typ\u0065":"\u0041\ud83d\ude00","t\u0073":"2026-01-01T00:00:0\u0031Z","k\"ey":"a\tb"}`,
		want: "0 A😀@1767225601000 k\"ey=a\tb:string\n", unit: time.Millisecond},
	{name: "numbers", in: `{"type":"A","ts":-0,"a":-0,"b":1e3,"c":1.0,"d":-0.0,"e":9223372036854775807,"f":9223372036854775808,"g":1E-2}`,
		want: "0 A@0 a=0:int b=1000:float c=1:float d=-0:float e=9223372036854775807:int f=9.223372036854776e+18:float g=0.01:float\n"},
	{name: "spaces around and within", in: " \t{ \"type\" : \"A\" , \"ts\" : 1 }\t \r\n\u00a0{\"type\":\"B\",\"ts\":2}\u2028\n\v\n",
		want: "0 A@1\n1 B@2\n"},
	{name: "invalid UTF-8 replaced", in: "{\"type\":\"A\",\"ts\":1,\"s\":\"x\xffy\"}", want: "0 A@1 s=x\ufffdy:string\n"},
	{name: "empty key is an attribute", in: `{"type":"A","ts":1,"":2}`, want: "0 A@1 =2:int\n"},
	{name: "a string timestamp may be an integer", in: `{"type":"A","ts":"7"}`, want: "0 A@7\n"},

	{name: "malformed, column counts from the line's start", in: "{\"type\":\"A\",\"ts\":1}\n  {\"type\":\"A\" \"ts\":2}",
		wantErr: `data.jsonl:2: invalid character '"' after object key:value pair at column 15`},
	{name: "unterminated", in: `{"type":"A","ts":1`, wantErr: `data.jsonl:1: unexpected end of line after object key:value pair at column 19`},
	{name: "bad escape", in: `{"type":"A\q","ts":1}`, wantErr: `data.jsonl:1: invalid character 'q' in string escape code at column 12`},
	{name: "trailing garbage", in: `{"type":"A","ts":1},`, wantErr: `data.jsonl:1: invalid character ',' after top-level value at column 20`},
	{name: "object then a number", in: `{"type":"A","ts":1} 5`, wantErr: `data.jsonl:1: more than one JSON value on the line (want one object per line)`},
	{name: "string line", in: `"type"`, wantErr: `data.jsonl:1: want a JSON object, found "type"`},
	{name: "null line", in: `null`, wantErr: `data.jsonl:1: want a JSON object, found null`},
	{name: "type null", in: `{"type":null,"ts":1}`, wantErr: `data.jsonl:1: type key "type" must be a string, found null`},
	{name: "type float", in: `{"type":1.50,"ts":1}`, wantErr: `data.jsonl:1: type key "type" must be a string, found 1.50`},
	{name: "type nested", in: `{"type":{},"ts":1}`, wantErr: `data.jsonl:1: key "type" holds an object: the type must be a string`},
	{name: "type array", in: `{"type":["A"],"ts":1}`, wantErr: `data.jsonl:1: type key "type" must be a string, found ["A"]`},
	{name: "ts bool", in: `{"type":"A","ts":true}`, wantErr: `data.jsonl:1: timestamp key "ts" must be an integer or an RFC 3339 string, found true`},
	{name: "ts null", in: `{"type":"A","ts":null}`, wantErr: `data.jsonl:1: timestamp key "ts" must be an integer or an RFC 3339 string, found null`},
	{name: "exponent ts", in: `{"type":"A","ts":1e3}`, wantErr: `data.jsonl:1: bad timestamp "1e3"`},
	{name: "duplicate type", in: `{"type":"A","ts":1,"type":"A"}`, wantErr: `data.jsonl:1: duplicate key "type"`},
	{name: "duplicate ts", in: `{"ts":1,"type":"A","ts":1}`, wantErr: `data.jsonl:1: duplicate key "ts"`},
	{name: "duplicate null key", in: `{"type":"A","ts":1,"x":null,"x":null}`, wantErr: `data.jsonl:1: duplicate key "x"`},
	{name: "duplicate escaped key", in: `{"type":"A","ts":1,"x":1,"\u0078":2}`, wantErr: `data.jsonl:1: duplicate key "x"`},
	{name: "same key on the next line is no duplicate", in: "{\"type\":\"A\",\"ts\":1,\"x\":1}\n{\"type\":\"A\",\"ts\":1,\"x\":2,\"x\":3}",
		wantErr: `data.jsonl:2: duplicate key "x"`},
	{name: "a bad array is malformed JSON", in: `{"type":"A","ts":1,"o":[1,"x":1,,`, wantErr: `data.jsonl:1: invalid character ':' after array element at column 30`},
	{name: "byte order mark", in: "\ufeff{\"type\":\"A\",\"ts\":1}", wantErr: `data.jsonl:1: invalid character '\ufeff' looking for beginning of value at column 1`},
}

func TestLoadJSONLRules(t *testing.T) {
	runLoadCases(t, "data.jsonl", func(r *strings.Reader, opts Options) (*event.Stream, error) {
		return LoadJSONL(r, "data.jsonl", opts)
	}, jsonlCases)
}
