package ast

// Keywords exposes the printer's keyword set to the drift test, which
// compares it with the grammar's.
var Keywords = keywords
