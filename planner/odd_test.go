package planner_test

import (
	"strings"
	"testing"

	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/source"
)

// TestOddValues checks the notices on absent and mixed values: how many
// events, what each comparison did with them, the fix; none where the
// query guards with has() or the data holds one kind.
func TestOddValues(t *testing.T) {
	load := func(t *testing.T, name, text string) *event.Stream {
		t.Helper()
		var s *event.Stream
		var err error
		if strings.HasSuffix(name, ".csv") {
			s, err = source.LoadCSV(strings.NewReader(text), name, source.Options{})
		} else {
			s, err = source.LoadJSONL(strings.NewReader(text), name, source.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sensors := "type,ts,temp,note\nR,1,20,\nR,2,,\nR,3,27,x\nR,4,,\nS,5,1,\n"
	orders := `{"type":"O","ts":1,"amount":10,"ok":true}` + "\n" +
		`{"type":"O","ts":2,"amount":"19.99","ok":"yes"}` + "\n" +
		`{"type":"O","ts":3,"amount":30.5,"ok":false}` + "\n" +
		`{"type":"O","ts":4,"ok":true}` + "\n"
	tests := []struct {
		name, data, query string
		want              []string
	}{
		{"an empty cell", sensors, "PATTERN SEQ(R a, R b) WHERE b.temp - a.temp >= 5", []string{
			"2 of 4 R events have no temp: b.temp - a.temp >= 5 is true on them (a comparison that reads an absent attribute holds); has(b.temp) AND has(a.temp) leaves them out"}},
		{"guarded by has", sensors, "PATTERN SEQ(R a, R b) WHERE has(a.temp) AND has(b.temp) AND b.temp - a.temp >= 5", nil},
		{"guarded on one variable only", sensors, "PATTERN SEQ(R a, R b) WHERE has(b.temp) AND b.temp > a.temp", []string{
			"2 of 4 R events have no temp: b.temp > a.temp is true on them (a comparison that reads an absent attribute holds); has(a.temp) leaves them out"}},
		{"every event of the type has it", sensors, "PATTERN S s WHERE s.temp > 5", nil},
		{"two types count their own events", sensors, "PATTERN SEQ(R a, S b) WHERE a.temp < 3 AND b.temp < 3", []string{
			"2 of 4 R events have no temp: a.temp < 3 is true on them (a comparison that reads an absent attribute holds); has(a.temp) leaves them out"}},
		{"a closure element", sensors, "PATTERN SEQ(S s, R+ b[]) WHERE b[i].temp > 1 WITHIN 9", []string{
			"2 of 4 R events have no temp: b[i].temp > 1 is true on them (a comparison that reads an absent attribute holds); has(b[i].temp) leaves them out"}},
		{"a negated component", sensors, "PATTERN SEQ(S a, !(R n), S b) WHERE n.temp > 100", []string{
			"2 of 4 R events have no temp: n.temp > 100 is true on them (a comparison that reads an absent attribute holds); has(n.temp) leaves them out"}},
		{"no value at all is another warning's", sensors, "PATTERN S s WHERE s.note = 'x'", nil},
		{"RETURN reads no comparison", sensors, "PATTERN R r RETURN r.temp", nil},
		{"a string among numbers", orders, "PATTERN O o WHERE has(o.amount) AND o.amount > 15", []string{
			"1 of 4 O events has amount as a string where it is compared with a number: o.amount > 15 is false on it (a string and a number are never equal or ordered); has() holds on it, so write amount as a number in the data"}},
		{"!= holds, arithmetic is absent", orders, "PATTERN O o WHERE has(o.amount) AND o.amount != 15 AND o.amount * 2 < 100", []string{
			"1 of 4 O events has amount as a string where it is compared with a number: o.amount != 15 is true on it, arithmetic on it is absent, so o.amount * 2 < 100 is true on it (a string and a number are never equal or ordered); has() holds on it, so write amount as a number in the data"}},
		{"absent and another kind", orders, "PATTERN O o WHERE o.amount < 15", []string{
			"1 of 4 O events has no amount: o.amount < 15 is true on it (a comparison that reads an absent attribute holds); has(o.amount) leaves it out",
			"1 of 4 O events has amount as a string where it is compared with a number: o.amount < 15 is false on it (a string and a number are never equal or ordered); has() holds on it, so write amount as a number in the data"}},
		{"two attributes: the most events' kind is the one wanted", orders, "PATTERN SEQ(O a, O b) WHERE a.ok = b.ok", []string{
			"1 of 4 O events has ok as a string where it is compared with a bool: a.ok = b.ok is false on it (a string and a bool are never equal or ordered); has() holds on it, so write ok as a bool in the data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := load(t, map[bool]string{true: "x.csv", false: "x.jsonl"}[tt.data == sensors], tt.data)
			p, err := compile(t, stream, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range p.OddValues(stream.Schema, nil) {
				got = append(got, o.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestOddValuesSince counts a live stream's events from a base schema on:
// those before the query started are not its.
func TestOddValuesSince(t *testing.T) {
	stream, err := source.LoadCSV(strings.NewReader("type,ts,temp\nR,1,\nR,2,3\nR,3,\nR,4,\nR,5,1\n"), "x.csv", source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := event.NewSchema()
	base.AddAttr("temp")
	base.AddType("R")
	for _, e := range stream.Events[:2] {
		base.Observe(e)
	}
	p, err := compile(t, stream, "PATTERN R r WHERE r.temp > 2")
	if err != nil {
		t.Fatal(err)
	}
	odd := p.OddValues(stream.Schema, base)
	if len(odd) != 1 || odd[0].Events != 2 || odd[0].Of != 3 {
		t.Errorf("got %+v, want 2 of 3 events without temp", odd)
	}
}
