package session

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/event"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/query"
	"github.com/sase-cep/sase/source"
)

// groupRules are a script's consecutive RULE statements on one group's
// stream: each is a query of its own (its number, its SHOW QUERIES row,
// STOP QUERY), and they start together, as one rulebook of this instance
// (groupSource.RunGroupBook), when the run of rules ends, as a loaded
// stream's rules do (rules.go).
type groupRules struct {
	live  *source.Live
	g     groupSource
	out   string
	rules []groupRule
}

type groupRule struct {
	lq          *liveQuery
	name        string // its query's name (q3): its subjects and Msg-Ids
	compile     func(*event.Schema) (query.Query, output.Schema, int64, error)
	partitioned func(key string) bool
}

// groupRule holds RULE query q on group stream l for the rulebook its
// run of rules makes.
func (s *Session) groupRule(src *ast.Source, q *ast.Query, l *source.Live, g groupSource) error {
	compile, partitioned, err := s.groupCompile(src, q, l)
	if err != nil {
		return err
	}
	lq := s.addQuery(l, q)
	name := "q" + strconv.Itoa(lq.id)
	lq.group = func() source.GroupStats { return g.GroupStats(name) }
	if s.grules == nil {
		s.grules = &groupRules{live: l, g: g, out: s.set.Output}
	}
	s.grules.rules = append(s.grules.rules, groupRule{lq: lq, name: name, compile: compile, partitioned: partitioned})
	s.note("query %d (rule %s) started on %s, with the other instances of its group", lq.id, q.Rule.Name, l.Name())
	return nil
}

// startGroupRules starts the group rules held, if any, as one rulebook:
// it runs until the session ends or STOP QUERY has stopped each rule (a
// rule stopped alone ends at once, the others go on).
func (s *Session) startGroupRules() {
	b := s.grules
	if b == nil {
		return
	}
	s.grules = nil
	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan int, len(b.rules)) // each rule is stopped once at most
	var mu sync.Mutex
	running := len(b.rules)
	end := func(r groupRule, state State) { // under mu
		r.lq.state.Store(int32(state))
		s.bgNote("(query %d %s: %s)", r.lq.id, state, b.g.GroupSummary(r.name))
		close(r.lq.done)
		running--
	}
	names := make([]string, len(b.rules))
	for i, r := range b.rules {
		names[i] = r.name
		r.lq.cancel = func() {
			mu.Lock()
			defer mu.Unlock()
			if r.lq.State() != Running {
				return
			}
			stop <- i
			end(r, Stopped)
			if running == 0 {
				cancel() // the book ends with its last rule
			}
		}
	}
	compile := func(i int, sc *event.Schema) (query.Query, output.Schema, error) {
		q, rows, _, err := b.rules[i].compile(sc)
		return q, rows, err
	}
	partitioned := func(i int, key string) bool { return b.rules[i].partitioned(key) }
	go func() {
		defer cancel()
		err := b.g.RunGroupBook(ctx, names, b.out, partitioned, compile, s.c.Rulebook, stop)
		mu.Lock()
		defer mu.Unlock()
		state := Stopped
		if err != nil && ctx.Err() == nil {
			state = Failed
			s.bgNote("%s rules %s: %v", s.style.errorPrefix(), strings.Join(names, ", "), err)
		}
		for _, r := range b.rules {
			if r.lq.State() == Running {
				end(r, state)
			}
		}
	}()
}
