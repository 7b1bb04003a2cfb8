// Grammar of sase statements and queries (docs/LANGUAGE.md: Lexical rules,
// Queries, Statements; docs/STRATEGIES.md: Naming a strategy). The tree is
// turned into package ast by parse.go, which also does the checks a grammar
// cannot express well (time units, conditions vs. values, closure indexes).
// Time units are plain names (ID), checked against event's unit table, so
// that WITHIN and LOAD's time_unit take the same words. grammar/tables.go
// reads the keyword and statement sets for messages from the generated code.
grammar Sase;

options { caseInsensitive = true; }

// ---- statements ----

// Every decision here is LL(1), so an error inside a statement is reported
// by the statement's rules, with their expected tokens.

script
    : statement? (SEMI statement?)* EOF
    ;

statement
    : query                                       # queryStmt
    | LOAD STRING loadClause*                     # loadStmt
    | LISTEN STRING loadClause*                   # listenStmt
    | GENERATE STOCKS generateClause*             # generateStmt
    | USE name                                    # useStmt
    | SHOW (STREAMS | QUERIES | SETTINGS | TYPES (FROM name)?)   # showStmt
    | STOP QUERY INT                              # stopStmt
    | DESCRIBE name                               # describeStmt
    | SET word EQ value                           # setStmt
    | rule                                        # ruleStmt
    ;

// ---- rulebooks (issue 31): RULE name: query names a query as one rule of
// a rulebook; a script's consecutive rules on one stream run in one pass
// (README, Many rules). RULE stays a name (ident) everywhere else.
rule
    : RULE name COLON query
    ;

loadClause
    : FOLLOW                                      # followClause
    | AS name                                     # asClause
    | FORMAT ID                                   # formatClause
    | WITH optionList                               # withClause
    ;

generateClause
    : AS name                                     # genAsClause
    | WITH optionList                               # genWithClause
    ;

optionList
    : LPAREN option (COMMA option)* RPAREN
    ;

option
    : word EQ value
    ;

// A statement value: a literal, or a bare word taken as a string.
value
    : signedNumber
    | STRING
    | TRUE
    | FALSE
    | word
    ;

signedNumber
    : MINUS? (INT | FLOAT)
    ;

// ---- queries ----

// A MATCH_RECOGNIZE is a query too: EXPLAIN is one prefix of both, so that
// an error after it lists all they accept.
query
    : (EXPLAIN ANALYZE? explainOptions?)?
      ( (PATTERN | EVENT) pattern
        (FROM name)? (WHERE expr)? (WITHIN duration)?
        (RETURN returnList (INTO name)?)?
      | matchRecognize
      )
    ;

// PostgreSQL's form: EXPLAIN (ANALYZE, FORMAT json) query.
explainOptions
    : LPAREN explainOption (COMMA explainOption)* RPAREN
    ;

explainOption
    : ANALYZE
    | FORMAT ID
    ;

// ---- the pattern algebra (LANGUAGE.md §9): nested SEQ, AND, OR, optional
// items ('?') and bounded closures ({n,m}, {n}, *). A flat SEQ, a paren
// list or a single component parses as before and takes v1's path; the
// builder (parse.go) keeps a tree only for the v3 forms.
pattern
    : item
    ;

item
    : SEQ LPAREN item (COMMA item)* RPAREN QUESTION?   # seqItem
    | AND LPAREN item (COMMA item)* RPAREN QUESTION?   # andItem
    | OR LPAREN item (COMMA item)* RPAREN QUESTION?    # orItem
    | LPAREN item (SEMI item)* RPAREN QUESTION?        # parenItem
    | component                                        # componentItem
    ;

component
    : BANG LPAREN element RPAREN                  # negParenComponent
    | BANG element                                # negComponent
    | element                                     # posComponent
    ;

element
    : typeExpr (closure | QUESTION)? (name (LBRACK RBRACK)?)?
    ;

typeExpr
    : ANY LPAREN name (COMMA name)* RPAREN        # anyType
    | name                                        # oneType
    ;

closure
    : PLUS                                        # plusClosure
    | CARET INT                                   # powerClosure
    | LBRACE INT COMMA RBRACE                     # atLeastClosure
    | STAR                                        # starClosure
    | LBRACE INT COMMA INT RBRACE                 # rangeClosure
    | LBRACE INT RBRACE                           # exactClosure
    ;
// ---- end of the pattern algebra's rules

duration
    : (INT | FLOAT) ID?
    ;

returnList
    : STAR
    | returnItem (COMMA returnItem)*
    ;

returnItem
    : expr (AS name)?
    ;

// ---- MATCH_RECOGNIZE (docs/MATCH_RECOGNIZE.md) ----

// SQL's row pattern recognition: SELECT ... FROM s MATCH_RECOGNIZE (...).
// Its words (PARTITION, MEASURES, DEFINE, ...) are not keywords of the
// language, so they stay usable as names; grammar/matchrecognize.go parses
// the tokens after SELECT with the standard's grammar and its errors.
matchRecognize
    : SELECT mrToken*
    ;

mrToken
    : ~(SEMI | EOF)
    ;

// ---- expressions ----

// Alternatives are listed from the tightest binding to the loosest.
expr
    : MINUS expr                                  # negExpr
    | expr op=(STAR | SLASH | PERCENT) expr       # mulExpr
    | expr op=(PLUS | MINUS) expr                 # addExpr
    | expr cmpOp expr                             # cmpExpr
    | NOT expr                                    # notExpr
    | expr AND expr                               # andExpr
    | expr OR expr                                # orExpr
    | primary                                     # primaryExpr
    ;

cmpOp
    : EQ | NE | LT | LE | GT | GE
    ;

primary
    : LPAREN expr RPAREN                                          # parenExpr
    | (INT | FLOAT | STRING | TRUE | FALSE)                       # literalExpr
    | LBRACK equivAttr (COMMA equivAttr)* RBRACK                  # equivExpr
    | (STRATEGY | ID) LPAREN (name (COMMA name)*)? RPAREN
      LBRACE expr RBRACE                                          # strategyForm
    | STRATEGY                                                    # strategyWord
    | ID LPAREN (expr (COMMA expr)*)? RPAREN                      # callExpr
    | name LBRACK RBRACK (DOT attrPath)?                          # listRef
    | name LBRACK DOTDOT ID MINUS INT RBRACK (DOT attrPath)?      # runningRef
    | name LBRACK closureIndex RBRACK DOT attrPath                # indexedRef
    | name DOT LEN                                                # lenRef
    | name DOT attrPath                                           # attrRef
    | name                                                        # varRef
    ;

closureIndex
    : INT                                         # constIndex
    | ID ((PLUS | MINUS) INT)?                    # iIndex
    | name DOT LEN ((PLUS | MINUS) INT)?          # lenIndex
    ;

equivAttr
    : equivPath (EQ signedNumber | EQ (STRING | TRUE | FALSE))?
    ;

// ---- dotted attribute names (issue 29) ----

// An attribute's name may be a dotted path: the JSON loader names a nested
// object's members so (b.geo.country, [geo.country]). parse.go joins the
// parts, each a name of its own (`my-key`), into one attribute name.
attrPath
    : attrName (DOT word)*
    ;

equivPath
    : word (DOT word)*
    ;

// ---- names ----

// name is a type, variable or stream name. The statement keywords that
// cannot be confused with query syntax are accepted as names, so that
// GENERATE STOCKS AS stocks works.
name
    : ident
    | LEN
    ;

ident
    : ID | BQUOTED | DQUOTED
    | EXPLAIN | ANALYZE | LOAD | FORMAT | FOLLOW | GENERATE | STOCKS | USE
    | SHOW | STREAMS | TYPES | DESCRIBE | SET
    | LISTEN | QUERIES | QUERY | STOP | SETTINGS
    | SELECT | RULE
    ;

// attrName follows a '.', where every keyword is unambiguous except LEN
// (b.LEN is the closure length).
attrName
    : ident
    | PATTERN | EVENT | SEQ | ANY | WHERE | WITHIN | RETURN | INTO | AS | AND
    | OR | NOT | FROM | WITH | TRUE | FALSE
    ;

// word is any name-like token: option and SET keys, equivalence attributes.
word
    : attrName
    | LEN
    ;

// ---- lexer ----

PATTERN  : 'pattern';
EVENT    : 'event';
SEQ      : 'seq';
ANY      : 'any';
WHERE    : 'where';
WITHIN   : 'within';
RETURN   : 'return';
INTO     : 'into';
AS       : 'as';
AND      : 'and' | '∧';
OR       : 'or' | '∨';
NOT      : 'not' | '¬';
FROM     : 'from';
EXPLAIN  : 'explain';
ANALYZE  : 'analyze';
LOAD     : 'load';
FORMAT   : 'format';
WITH     : 'with';
GENERATE : 'generate';
STOCKS   : 'stocks';
USE      : 'use';
SHOW     : 'show';
STREAMS  : 'streams';
TYPES    : 'types';
DESCRIBE : 'describe';
SET      : 'set';
FOLLOW   : 'follow';
LISTEN   : 'listen';
QUERIES  : 'queries';
QUERY    : 'query';
SETTINGS : 'settings';
STOP     : 'stop';
TRUE     : 'true';
FALSE    : 'false';
LEN      : 'len';
SELECT   : 'select'; // MATCH_RECOGNIZE
RULE     : 'rule';   // a rulebook's RULE name: query

// A strategy word with at least one '-'; the all-underscore spelling lexes
// as ID and parse.go recognizes it where a condition is expected.
STRATEGY
    : 'skip' '-' 'till' [-_] WORD [-_] 'match'
    | 'skip' '_' 'till' '-' WORD [-_] 'match'
    | 'skip' '_' 'till' '_' WORD '-' 'match'
    | WORD '-' 'contiguity'
    ;

ID      : [a-z_] [a-z0-9_]*;
BQUOTED : '`' (~'`' | '``')* '`';
DQUOTED : '"' (~'"' | '""')* '"';
STRING  : '\'' (~'\'' | '\'\'')* '\'';
FLOAT   : DIGITS '.' DIGITS EXPONENT? | DIGITS EXPONENT;
INT     : DIGITS;

EQ      : '=' | '==';
NE      : '!=' | '<>' | '≠';
LE      : '<=' | '≤';
GE      : '>=' | '≥';
LT      : '<';
GT      : '>';
PLUS    : '+';
MINUS   : '-';
STAR    : '*';
SLASH   : '/';
PERCENT : '%';
BANG    : '!';
QUESTION: '?'; // the algebra's optional item; MATCH_RECOGNIZE's reluctant quantifiers
CARET   : '^';
LPAREN  : '(';
RPAREN  : ')';
LBRACK  : '[';
RBRACK  : ']';
LBRACE  : '{';
RBRACE  : '}';
COMMA   : ',';
SEMI    : ';';
DOTDOT  : '..';
DOT     : '.';
DOLLAR   : '$'; // MATCH_RECOGNIZE's end anchor
PIPE     : '|'; // MATCH_RECOGNIZE's alternation
COLON    : ':'; // RULE name: query

LINE_COMMENT  : '--' ~[\r\n]* -> skip;
BLOCK_COMMENT : '/*' .*? '*/' -> skip;
WS            : [ \t\r\n\f]+ -> skip;

// Unterminated forms run to the end of the input; they are never longer
// than the terminated token, so they only match when the closing quote is
// missing. parse.go reports them.
UNTERMINATED_BQUOTED : '`' (~'`' | '``')*;
UNTERMINATED_DQUOTED : '"' (~'"' | '""')*;
UNTERMINATED_STRING  : '\'' (~'\'' | '\'\'')*;
UNTERMINATED_COMMENT : '/*' (~'*' | '*'+ ~[*/])* '*'*;

fragment WORD     : [a-z0-9]+;
fragment DIGITS   : [0-9]+;
fragment EXPONENT : 'e' [+-]? DIGITS;
