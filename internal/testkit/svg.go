package testkit

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// SVG is what a test checks in an SVG file: its size and the text of its
// <text> elements (a chart's title, axis and tick labels, legend).
type SVG struct {
	Width, Height string
	Texts         []string
	Paths         []SVGPath
}

// SVGPath is a <path> element's d and style attributes.
type SVGPath struct{ D, Style string }

// ReadSVG parses the file at path as XML, failing the test unless it is
// well-formed with an <svg> root.
func ReadSVG(t testing.TB, path string) SVG {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	var svg SVG
	in, root := false, ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range tok.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch name := tok.Name.Local; {
			case root == "":
				root = name
				svg.Width, svg.Height = attr("width"), attr("height")
			case name == "path":
				svg.Paths = append(svg.Paths, SVGPath{D: attr("d"), Style: attr("style")})
			}
			in = tok.Name.Local == "text"
		case xml.CharData:
			if in {
				svg.Texts = append(svg.Texts, strings.TrimSpace(string(tok)))
			}
		case xml.EndElement:
			in = false
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	return svg
}
