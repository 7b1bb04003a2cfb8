package session

import (
	"bufio"
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/sase-cep/sase/ast"
	"github.com/sase-cep/sase/output"
	"github.com/sase-cep/sase/source"
)

// A LISTEN on a scheme other than tcp:// (nats://, registered by a
// package the program imports) is opened by source.Open; its WITH options
// travel as the URL's query, where the scheme reads its own (group) and
// the source's (type_column, on_error, ...). A SET output URL is a sink
// that output.Open finds the same way.

// listenScheme reports whether a LISTEN names a registered scheme rather
// than a TCP address.
func listenScheme(addr string) bool {
	scheme, _, ok := strings.Cut(addr, "://")
	return ok && !strings.EqualFold(scheme, "tcp")
}

// listenURL opens LISTEN 'scheme://...'.
func (s *Session) listenURL(src *ast.Source, st *ast.Listen) error {
	u, err := url.Parse(st.Addr)
	if err != nil {
		return errAt(src, st.Span.Start, "LISTEN %q: %v", st.Addr, err)
	}
	q := u.Query()
	for _, o := range st.Options {
		q.Set(strings.ToLower(o.Key), literalText(o.Value))
	}
	u.RawQuery = q.Encode()
	name, err := s.claim(st.Name, "listen")
	if err != nil {
		return err
	}
	ls, err := source.Open(context.Background(), u.String(), source.WithName(name), source.WithFormat(st.Format), source.WithErrors(s.errw))
	if err != nil {
		return errAt(src, st.Span.Start, "%v", err)
	}
	l := source.NewLive(name, ls)
	s.addLive(l, "listening on "+ls.URL()+" as "+name)
	return nil
}

// liveWriter is a live query's writer: the SET output sink, or bw (the
// session's output) in SET format.
func (s *Session) liveWriter(id int, bw *bufio.Writer, sc output.Schema) (output.Writer, error) {
	if s.set.Output == "" {
		return s.writer(bw, sc), nil
	}
	return output.Open(context.Background(), s.set.Output, output.SinkConfig{Query: "q" + strconv.Itoa(id), Schema: sc})
}
