package source

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/sase-cep/sase/event"
)

// dump renders a stream one event a line: seq type@ts then the present
// attributes as name=value:kind in slot order.
func dump(s *event.Stream) string {
	var b strings.Builder
	for _, e := range s.Events {
		fmt.Fprintf(&b, "%d %s@%d", e.Seq, s.Schema.Types[e.Type].Name, e.TS)
		for slot, v := range e.Attrs {
			if !v.IsAbsent() {
				fmt.Fprintf(&b, " %s=%s:%s", s.Schema.Attrs[slot], v, v.Kind())
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type loadCase struct {
	name    string
	in      string
	opts    Options
	want    string        // dump of the stream
	unit    time.Duration // Stream.Unit
	wantErr string        // substring of the error; the stream must be nil
}

func runLoadCases(t *testing.T, file string, load func(r *strings.Reader, opts Options) (*event.Stream, error), cases []loadCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := load(strings.NewReader(tc.in), tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), file+":") {
					t.Errorf("err %q does not start with %s:", err, file)
				}
				if s != nil {
					t.Errorf("stream not nil on error: %d events", len(s.Events))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := dump(s); got != tc.want {
				t.Errorf("got\n%swant\n%s", got, tc.want)
			}
			if s.Unit != tc.unit {
				t.Errorf("unit = %v, want %v", s.Unit, tc.unit)
			}
			if s.Source != file {
				t.Errorf("source = %q", s.Source)
			}
		})
	}
}

// csvCases are LoadCSV's rules; they also seed the fuzz targets.
var csvCases = []loadCase{
	{name: "basic", in: "type,ts,price,sym\nA,1,10,x\nB,2,2.5,\n",
		want: "0 A@1 price=10:int sym=x:string\n1 B@2 price=2.5:float\n"},
	{name: "equal timestamps", in: "type,ts\nA,5\nB,5\nA,5\n", want: "0 A@5\n1 B@5\n2 A@5\n"},
	{name: "columns in any order", in: "x,ts,type\n1,3,A\n", want: "0 A@3 x=1:int\n"},
	{name: "typing", in: "type,ts,a,b,c,d,e,f,g,h,i,j\nA,1,nan,inf,+5,1e3,True,true,-0.5, x ,.5,99999999999999999999\n",
		want: "0 A@1 a=nan:string b=inf:string c=5:int d=1000:float e=True:string f=true:bool g=-0.5:float h= x :string i=0.5:float j=1e+20:float\n"},
	{name: "quoted fields and line numbers", in: "type,ts,s\nA,1,\"a,\nb\"\nA,0,x\n",
		wantErr: `data.csv:4: timestamp 0 is before the previous event's 1`},
	{name: "CRLF and BOM", in: "\ufefftype,ts,x\r\nA,1,2\r\n", want: "0 A@1 x=2:int\n"},
	{name: "blank lines skipped", in: "type,ts\n\nA,1\n\nB,2\n", want: "0 A@1\n1 B@2\n"},
	{name: "header only", in: "type,ts,x\n", want: ""},
	{name: "seq ts timestamp columns are attributes", in: "type,time,seq,ts,timestamp\nA,1,7,8,9\n",
		opts: Options{TSColumn: "time"}, want: "0 A@1 seq=7:int ts=8:int timestamp=9:int\n"},
	{name: "type from symbol column", in: "ts,symbol,price\n1,IBM,5\n2,Sun,6\n",
		opts: Options{TypeColumn: "symbol"}, want: "0 IBM@1 price=5:int\n1 Sun@2 price=6:int\n"},
	{name: "time unit", in: "type,ts\nA,1\nB,3\n", opts: Options{TimeUnit: time.Second},
		want: "0 A@1\n1 B@3\n", unit: time.Second},
	{name: "rfc3339", in: "type,ts\nA,2026-01-01T00:00:00Z\nB,2026-01-01T00:00:02.5+00:00\nC,2026-01-01T01:00:03+01:00\n",
		want: "0 A@1767225600000\n1 B@1767225602500\n2 C@1767225603000\n", unit: time.Millisecond},
	{name: "rfc3339 with time unit", in: "type,ts\nA,2026-01-01T00:00:00Z\nB,2026-01-01T00:00:02.5Z\n",
		opts: Options{TimeUnit: time.Second}, want: "0 A@1767225600\n1 B@1767225602\n", unit: time.Second},
	{name: "rfc3339 before 1970 rounds down", in: "type,ts\nA,1969-12-31T23:59:59.5Z\n",
		opts: Options{TimeUnit: time.Second}, want: "0 A@-1\n", unit: time.Second},

	{name: "empty file", in: "", wantErr: "data.csv: empty file"},
	{name: "out of order", in: "type,ts\nA,5\nB,5\nC,3\n",
		wantErr: "data.csv:4: timestamp 3 is before the previous event's 5 (timestamps must not decrease)"},
	{name: "out of order, the previous text as written", in: "type,ts\nA,+05\nB,3\n",
		wantErr: "data.csv:3: timestamp 3 is before the previous event's +05"},
	{name: "out of order after a leading zero", in: "type,ts\nA,1\nA,007\nB,-2\n",
		wantErr: "data.csv:4: timestamp -2 is before the previous event's 007"},
	{name: "out of order after minus zero", in: "type,ts\nA,-0\nB,-1\n",
		wantErr: "data.csv:3: timestamp -1 is before the previous event's -0"},
	{name: "out of order after a negative", in: "type,ts\nA,-10\nB,-11\n",
		wantErr: "data.csv:3: timestamp -11 is before the previous event's -10"},
	{name: "out of order rfc3339", in: "type,ts\nA,2026-01-01T00:00:02Z\nB,2026-01-01T00:00:01Z\n",
		wantErr: "data.csv:3: timestamp 2026-01-01T00:00:01Z is before the previous event's 2026-01-01T00:00:02Z"},
	{name: "too few fields", in: "type,ts,a,b\nA,1,2,3\nA,2,3\n", wantErr: "data.csv:3: 3 fields, header has 4"},
	{name: "too many fields", in: "type,ts\nA,1\nA,2\nA,3,4\n", wantErr: "data.csv:4: 3 fields, header has 2"},
	{name: "bad timestamp", in: "type,ts\nA,x\n", wantErr: `data.csv:2: bad timestamp "x"`},
	{name: "epoch seconds", in: "type,ts\nA,1715678229.5\nB,1715678230.25\n", want: "0 A@1715678229500\n1 B@1715678230250\n", unit: time.Millisecond},
	{name: "epoch seconds, integer after", in: "type,ts\nA,1715678229.5\nB,1715678230\n",
		wantErr: `data.csv:3: timestamp "1715678230" is an integer (ticks), but the stream's first, "1715678229.5" on line 2, is epoch seconds with a fraction (a wall-clock time): a stream's timestamps are all integers or all wall-clock times; a ts with a fraction is read as epoch seconds: give every line its fraction, or none (ticks are whole)`},
	// Issue 30's ninth defect: a 1.5 among ticks was said to mix RFC 3339 in.
	{name: "a fraction among ticks", in: "type,ts\nA,1\nB,1.5\n",
		wantErr: `data.csv:3: timestamp "1.5" is epoch seconds with a fraction (a wall-clock time), but the stream's first, "1" on line 2, is an integer (ticks): a stream's timestamps are all integers or all wall-clock times; a ts with a fraction is read as epoch seconds: give every line its fraction, or none (ticks are whole)`},
	{name: "date and time", in: "type,ts\nA,2024-05-14 09:00:00\nB,2024-05-14 09:00:00.250\n", want: "0 A@1715677200000\n1 B@1715677200250\n", unit: time.Millisecond},
	{name: "date and time in seconds", in: "type,ts\nA,2024-05-14 09:00:01.5\n", opts: Options{TimeUnit: time.Second}, want: "0 A@1715677201\n", unit: time.Second},
	{name: "exponent timestamp", in: "type,ts\nA,1e3\n", wantErr: `data.csv:2: bad timestamp "1e3"`},
	{name: "delimiter", in: "type;ts;x\nA;1;2,5\n", opts: Options{Delimiter: ';'}, want: "0 A@1 x=2,5:string\n"},
	{name: "tab delimiter", in: "type\tts\tx\nA\t1\t2\n", opts: Options{Delimiter: '\t'}, want: "0 A@1 x=2:int\n"},
	{name: "a header of one column with ;", in: "type;ts\nA;1\n",
		wantErr: `data.csv:1: no type column "type" in the header (columns: "type;ts"); the fields look separated by ";": WITH (delimiter = ';')`},
	{name: "a header of one column with a tab", in: "kind\tts\nA\t1\n",
		wantErr: `data.csv:1: no type column "type" in the header (columns: "kind\tts"); the fields look separated by "\t": WITH (delimiter = 'tab')`},
	{name: "empty timestamp", in: "type,ts\nA,1\nA,\n", wantErr: `data.csv:3: bad timestamp ""`},
	{name: "mixed timestamps", in: "type,ts\nA,1\nB,2026-01-01T00:00:00Z\n",
		wantErr: `data.csv:3: timestamp "2026-01-01T00:00:00Z" is a date and time (a wall-clock time), but the stream's first, "1" on line 2, is an integer (ticks): a stream's timestamps are all integers or all wall-clock times`},
	// With only a ts it is a punctuation (see TestPunctuationLoaded).
	{name: "empty type", in: "type,ts,x\nA,1,1\n,2,5\n", wantErr: `data.csv:3: empty type`},
	{name: "no type column", in: "kind,ts\nA,1\n", wantErr: `data.csv:1: no type column "type" in the header (columns: "kind", "ts"); name the column with WITH (type_column = '...')`},
	{name: "no ts column", in: "type,time\nA,1\n", wantErr: `data.csv:1: no timestamp column "ts" in the header (columns: "type", "time"); name the column with WITH (ts_column = '...')`},
	{name: "symbol is the type column, not type", in: "type,ts\nA,1\n", opts: Options{TypeColumn: "symbol"},
		wantErr: `no type column "symbol"`},
	{name: "duplicate column", in: "type,ts,x,x\nA,1,2,3\n", wantErr: `data.csv:1: duplicate column "x"`},
	{name: "unnamed column", in: "type,ts,\nA,1,2\n", wantErr: `data.csv:1: column 3 has no name`},
	{name: "bare quote", in: "type,ts,x\nA,1,2\nA,2,a\"b\n", wantErr: `data.csv:3:6: bare "`},
	{name: "unterminated quote, reported where it opens", in: "type,ts,x\nA,1,2\nA,2,\"abc\nA,3,4\nA,4,5\n",
		wantErr: `data.csv:3: a quoted field of the record that starts on this line is not closed properly (extraneous or missing " in quoted-field at line 5, column 7)`},
	{name: "one field", in: "type,ts,x\nA\n", wantErr: "data.csv:2: 1 field, header has 3"},
	{name: "invalid UTF-8", in: "type,ts,x\nA,1,\xff\n", want: "0 A@1 x=\ufffd:string\n"},
	{name: "max_line", in: "type,ts,x\nA,1,123456\n", opts: Options{MaxLine: 9}, wantErr: "data.csv:2: line longer than 9 bytes"},
}

func TestLoadCSV(t *testing.T) {
	runLoadCases(t, "data.csv", func(r *strings.Reader, opts Options) (*event.Stream, error) {
		return LoadCSV(r, "data.csv", opts)
	}, csvCases)
}

func TestLoadCSVSchema(t *testing.T) {
	s, err := LoadCSV(strings.NewReader("type,ts,p,q\nA,1,1,\nB,2,x,2.5\nA,3,2.5,\n"), "d.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Schema
	a, _ := sc.TypeID("A")
	b, _ := sc.TypeID("B")
	p, _ := sc.AttrSlot("p")
	q, _ := sc.AttrSlot("q")
	// Every column is an attribute of every type, even if never filled.
	if got := fmt.Sprint(sc.AttrsOf(a), sc.AttrsOf(b)); got != "[p q] [p q]" {
		t.Errorf("attrs = %s", got)
	}
	if got := fmt.Sprint(sc.Types[a].Count, sc.Types[a].Kinds[p], sc.Types[a].Kinds[q], sc.Types[b].Kinds[p]); got != "2 int|float absent string" {
		t.Errorf("counts and kinds = %s", got)
	}
	if _, ok := sc.AttrSlot("type"); ok {
		t.Error("type is an attribute")
	}
	if _, ok := sc.AttrSlot("ts"); ok {
		t.Error("ts is an attribute")
	}
}

func TestLoadJSONL(t *testing.T) {
	runLoadCases(t, "data.jsonl", func(r *strings.Reader, opts Options) (*event.Stream, error) {
		return LoadJSONL(r, "data.jsonl", opts)
	}, []loadCase{
		{name: "typing", in: `{"type":"A","ts":1,"i":-3,"f":1.0,"e":1e3,"big":100000000000000000000,"s":"x","t":true,"n":null}` + "\n",
			want: "0 A@1 i=-3:int f=1:float e=1000:float big=1e+20:float s=x:string t=true:bool\n"},
		{name: "key order and per-event slots", in: "{\"ts\":1,\"type\":\"A\",\"x\":1}\n\n  \n{\"type\":\"B\",\"ts\":2,\"y\":2,\"x\":3}\n{\"type\":\"A\",\"ts\":2}\n",
			want: "0 A@1 x=1:int\n1 B@2 x=3:int y=2:int\n2 A@2\n"},
		{name: "empty input", in: "", want: ""},
		{name: "rfc3339", in: `{"type":"A","ts":"2026-01-01T00:00:01Z"}` + "\n", want: "0 A@1767225601000\n", unit: time.Millisecond},
		{name: "options", in: `{"sym":"IBM","time":4,"ts":9,"type":"t"}`, opts: Options{TypeColumn: "sym", TSColumn: "time", TimeUnit: time.Minute},
			want: "0 IBM@4 ts=9:int type=t:string\n", unit: time.Minute},
		{name: "CRLF", in: "{\"type\":\"A\",\"ts\":1}\r\n{\"type\":\"A\",\"ts\":2}\r\n", want: "0 A@1\n1 A@2\n"},

		{name: "nested objects are dotted attributes", in: "\n" + `{"type":"A","ts":1,"o":{"a":1,"p":{"q":"x"},"e":{}},"b":2}` + "\n" + `{"type":"A","ts":2,"o":{"a":3}}`,
			want: "0 A@1 o.a=1:int o.p.q=x:string b=2:int\n1 A@2 o.a=3:int\n"},
		{name: "a nested key twice", in: `{"type":"A","ts":1,"o":{"a":1},"o.a":2}`, wantErr: `data.jsonl:1: duplicate key "o.a"`},
		{name: "arrays are their JSON text", in: `{"type":"A","ts":1,"o":{"a":[1, "x"]},"b":[]}` + "\n" + `{"type":"A","ts":2,"b":[[true],{"k":null}]}`,
			want: "0 A@1 o.a=[1,\"x\"]:string b=[]:string\n1 A@2 b=[[true],{\"k\":null}]:string\n"},
		{name: "nested ts", in: `{"type":"A","ts":{"s":1}}`, wantErr: `data.jsonl:1: key "ts" holds an object`},
		{name: "array ts", in: `{"type":"A","ts":[1]}`, wantErr: `data.jsonl:1: timestamp key "ts" must be an integer or an RFC 3339 string, found [1]`},
		{name: "type not a string", in: `{"type":1,"ts":1}`, wantErr: `data.jsonl:1: type key "type" must be a string, found 1`},
		{name: "null type", in: `{"type":null,"ts":1}`, wantErr: `must be a string, found null`},
		{name: "empty type", in: `{"type":"","ts":1}`, wantErr: `data.jsonl:1: empty type`},
		{name: "no type", in: `{"ts":1,"x":2}`, wantErr: `data.jsonl:1: no type key "type"`},
		{name: "no ts", in: `{"type":"A"}`, wantErr: `data.jsonl:1: no timestamp key "ts"`},
		{name: "epoch seconds ts", in: `{"type":"A","ts":1715678229.5}`, want: "0 A@1715678229500\n", unit: time.Millisecond},
		{name: "bool ts", in: `{"type":"A","ts":true}`, wantErr: `timestamp key "ts" must be an integer or an RFC 3339 string, found true`},
		{name: "out of order", in: "{\"type\":\"A\",\"ts\":5}\n\n{\"type\":\"A\",\"ts\":4}\n",
			wantErr: "data.jsonl:3: timestamp 4 is before the previous event's 5"},
		{name: "mixed timestamps", in: "{\"type\":\"A\",\"ts\":5}\n{\"type\":\"A\",\"ts\":\"2026-01-01T00:00:01Z\"}\n",
			wantErr: "data.jsonl:2: timestamp \"2026-01-01T00:00:01Z\" is a date and time (a wall-clock time), but the stream's first, \"5\" on line 1, is an integer (ticks)"},
		{name: "duplicate key", in: `{"type":"A","ts":1,"x":1,"x":2}`, wantErr: `data.jsonl:1: duplicate key "x"`},
		{name: "not an object", in: `[1]`, wantErr: `data.jsonl:1: want a JSON object, found [`},
		{name: "malformed", in: "{\"type\":\"A\",\"ts\":1}\n{\"type\":\"A\",", wantErr: `data.jsonl:2: `},
		{name: "two objects on a line", in: `{"type":"A","ts":1} {"type":"A","ts":2}`, wantErr: `data.jsonl:1: more than one JSON value`},
	})
}

func TestLoadJSONLSchema(t *testing.T) {
	in := "{\"type\":\"A\",\"ts\":1,\"x\":1,\"n\":null}\n{\"type\":\"B\",\"ts\":2,\"y\":\"s\"}\n{\"type\":\"A\",\"ts\":3,\"z\":2.5}\n"
	s, err := LoadJSONL(strings.NewReader(in), "d.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Schema.TypeID("A")
	b, _ := s.Schema.TypeID("B")
	// A type's attributes are the union of its keys, a null one included.
	if got := fmt.Sprint(s.Schema.AttrsOf(a), s.Schema.AttrsOf(b)); got != "[n x z] [y]" {
		t.Errorf("attrs = %s", got)
	}
}

func TestLoad(t *testing.T) {
	dir := filepath.Join("..", "testdata", "source")
	csvS, err := Load(filepath.Join(dir, "trades.csv"), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	jsonS, err := Load(filepath.Join(dir, "trades.jsonl"), "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dump(csvS) != dump(jsonS) || len(csvS.Events) != 4 {
		t.Errorf("csv and jsonl differ:\n%s\n%s", dump(csvS), dump(jsonS))
	}
	if csvS.Source != filepath.Join(dir, "trades.csv") || csvS.Name != "" {
		t.Errorf("source %q name %q", csvS.Source, csvS.Name)
	}

	abs, _ := filepath.Abs(filepath.Join(dir, "trades.jsonl"))
	if s, err := Load("file://"+abs, "", Options{}); err != nil || dump(s) != dump(jsonS) || s.Source != "file://"+abs {
		t.Errorf("file:// URL: %v", err)
	}

	// An explicit format wins over the extension.
	tmp := filepath.Join(t.TempDir(), "trades.txt")
	data, _ := os.ReadFile(filepath.Join(dir, "trades.jsonl"))
	os.WriteFile(tmp, data, 0o644)
	if s, err := Load(tmp, "JSONL", Options{}); err != nil || dump(s) != dump(jsonS) {
		t.Errorf("FORMAT jsonl: %v", err)
	}
	if _, err := Load(tmp, "", Options{}); err == nil || !strings.Contains(err.Error(), "cannot tell the format") {
		t.Errorf("unknown extension: %v", err)
	}
	if _, err := Load(tmp, "xml", Options{}); err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.csv"), "", Options{}); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(dir, "out_of_order.csv")
	if _, err := Load(path, "", Options{}); err == nil || !strings.HasPrefix(err.Error(), path+":4: timestamp 3") {
		t.Errorf("out of order: %v", err)
	}
}

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		kv      map[string]string
		want    Options
		wantErr string
	}{
		{kv: nil, want: Options{TypeColumn: "type", TSColumn: "ts"}},
		{kv: map[string]string{"type_column": "symbol", "TS_COLUMN": "Time", "time_unit": "MS"},
			want: Options{TypeColumn: "symbol", TSColumn: "Time", TimeUnit: time.Millisecond}},
		{kv: map[string]string{"time_unit": "sec"}, want: Options{TypeColumn: "type", TSColumn: "ts", TimeUnit: time.Second}},
		{kv: map[string]string{"time_unit": "minutes"}, want: Options{TypeColumn: "type", TSColumn: "ts", TimeUnit: time.Minute}},
		{kv: map[string]string{"time_unit": "hour"}, want: Options{TypeColumn: "type", TSColumn: "ts", TimeUnit: time.Hour}},
		{kv: map[string]string{"time_unit": "days"}, want: Options{TypeColumn: "type", TSColumn: "ts", TimeUnit: 24 * time.Hour}},
		{kv: map[string]string{"format": "csv"}, wantErr: `unknown LOAD option "format" (valid: clock, delimiter, lag, late, max_line, max_pending, on_error, slack, sort, time_unit, ts_column, type, type_column)`},
		{kv: map[string]string{"delimiter": ";"}, want: Options{TypeColumn: "type", TSColumn: "ts", Delimiter: ';'}},
		{kv: map[string]string{"DELIMITER": "TAB"}, want: Options{TypeColumn: "type", TSColumn: "ts", Delimiter: '\t'}},
		{kv: map[string]string{"delimiter": ";;"}, wantErr: `delimiter must be one character other than a quote or a line break (or 'tab'), got ";;"`},
		{kv: map[string]string{"delimiter": "\""}, wantErr: `delimiter must be one character`},
		{kv: map[string]string{"time_unit": "fortnight"}, wantErr: `unknown time_unit "fortnight"`},
		{kv: map[string]string{"type_column": ""}, wantErr: "type_column must not be empty"},
		{kv: map[string]string{"ts_column": "type"}, wantErr: `both name "type"`},
		{kv: map[string]string{"max_line": "65536"}, want: Options{TypeColumn: "type", TSColumn: "ts", MaxLine: 65536}},
		{kv: map[string]string{"MAX_LINE": "64 kb"}, want: Options{TypeColumn: "type", TSColumn: "ts", MaxLine: 65536}},
		{kv: map[string]string{"max_line": "1GB"}, want: Options{TypeColumn: "type", TSColumn: "ts", MaxLine: 1 << 30}},
		{kv: map[string]string{"max_line": "2GB"}, wantErr: `max_line must be a size from 1 byte to 1 GB, such as 65536 or '1MB'; got "2GB"`},
		{kv: map[string]string{"max_line": "0"}, wantErr: `max_line must be a size`},
		{kv: map[string]string{"max_line": "lots"}, wantErr: `max_line must be a size`},
		{kv: map[string]string{"max_pending": "64 MB"}, want: Options{TypeColumn: "type", TSColumn: "ts", MaxPending: 64 << 20}},
		{kv: map[string]string{"max_pending": "17GB"}, wantErr: `max_pending must be a size from 1 byte to 16 GB, such as 65536 or '1MB'; got "17GB"`},
	} {
		got, err := ParseOptions(tc.kv)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want %q", tc.kv, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: got %+v, %v; want %+v", tc.kv, got, err, tc.want)
		}
	}
}

func TestDefaultName(t *testing.T) {
	for path, want := range map[string]string{
		"data/stocks.csv":    "stocks",
		"my-data.v2.jsonl":   "my_data_v2",
		"2024.csv":           "_2024",
		"-":                  "stdin",
		".csv":               "stream",
		"/tmp/Trades_A.json": "Trades_A",
		"naïve.csv":          "na_ve",
	} {
		if got := DefaultName(path); got != want {
			t.Errorf("DefaultName(%q) = %q, want %q", path, got, want)
		}
	}
}

func Example() {
	csv := "type,ts,price\nIBM,1,101.5\nSun,2,12\n"
	s, err := LoadCSV(strings.NewReader(csv), "trades.csv", Options{})
	if err != nil {
		panic(err)
	}
	price, _ := s.Schema.AttrSlot("price")
	for _, e := range s.Events {
		fmt.Println(e.Seq, s.Schema.Types[e.Type].Name, e.TS, e.Attr(price))
	}

	cfg := DefaultStockConfig()
	cfg.Events = 2
	for e := range StockEvents(cfg) {
		fmt.Println(e.Attrs) // id, symbol, price, volume
	}
	// Output:
	// 0 IBM 1 101.5
	// 1 Sun 2 12
	// [0 9 12 156]
	// [1 4 8 741]
}

// TestLoadCollected checks that a loaded stream, whose events Collect
// holds in batches the collector does not scan while the load runs,
// survives collections during and after the load, with garbage reusing
// freed memory: each event (strings included) is what its line says.
func TestLoadCollected(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	const n = 30_000 // several arena blocks, and many batches
	var csvText, jsonText strings.Builder
	csvText.WriteString("type,ts,name,x\n")
	for i := range n {
		fmt.Fprintf(&csvText, "t%d,%d,name-%d-%s,%d\n", i%3, i, i, strings.Repeat("z", i%17), i*7)
		fmt.Fprintf(&jsonText, `{"type":"t%d","ts":%d,"name":"name-%d-%s","x":%d}`+"\n", i%3, i, i, strings.Repeat("z", i%17), i*7)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // garbage while the loads run
		defer close(done)
		var garbage [][]byte
		for {
			select {
			case <-stop:
				return
			default:
			}
			garbage = append(garbage[:0], bytes.Repeat([]byte{0xaa}, 4096))
		}
	}()
	var streams []*event.Stream
	for _, load := range []struct {
		text string
		load func(io.Reader, string, Options) (*event.Stream, error)
	}{{csvText.String(), LoadCSV}, {jsonText.String(), LoadJSONL}} {
		s, err := load.load(strings.NewReader(load.text), "x", Options{})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, s)
	}
	close(stop)
	<-done
	for range 3 {
		runtime.GC()
	}
	for _, s := range streams {
		if len(s.Events) != n {
			t.Fatalf("%d events, want %d", len(s.Events), n)
		}
		name, _ := s.Schema.AttrSlot("name")
		x, _ := s.Schema.AttrSlot("x")
		for i, e := range s.Events {
			want := fmt.Sprintf("name-%d-%s", i, strings.Repeat("z", i%17))
			if e.Seq != int64(i) || e.TS != int64(i) || s.Schema.Types[e.Type].Name != fmt.Sprintf("t%d", i%3) ||
				e.Attr(name).Str() != want || e.Attr(x).Int() != int64(i*7) {
				t.Fatalf("event %d: %+v", i, *e)
			}
		}
	}
}
