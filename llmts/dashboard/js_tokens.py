"""A small JavaScript tokenizer, just enough for the trace bundler (``bundle.py``) to find the ``import``
and ``export`` statements of the dashboard's modules without being fooled by strings, template
literals, regular expressions or comments that contain those words.

It knows comments, strings, template literals (with nested ``${...}``), regular expression literals
(told from division by the token before them, as the dashboard's code is written), numbers, names and
punctuators, and the bracket depth of every token. Whatever it cannot read raises ``BundleError`` with
the module and line: a trace must never be built from code it misread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BundleError", "Token", "tokenize"]


class BundleError(ValueError):
    """The dashboard's code uses a construct the trace bundler does not understand (or is malformed)."""


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "name", "punct", "string", "template", "regex", "number"
    text: str
    start: int
    end: int
    depth: int  # brackets ((, [, {, ${) open before this token


_PUNCTUATORS = sorted(
    (
        ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "??=",
        "=>", "==", "!=", "<=", ">=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "/=",
        "%=", "&=", "|=", "^=", "**", "<<", ">>",
        "{", "}", "(", ")", "[", "]", ";", ",", "<", ">", "+", "-", "*", "/", "%", "&", "|", "^",
        "!", "~", "?", ":", "=", ".", "@",
    ),
    key=len,
    reverse=True,
)  # fmt: skip
# After these a "/" starts a regular expression; after anything else (a name, a number, ")" or "]") it
# divides. "}" counts as a statement's end (a block), which is how the dashboard's code uses it.
_REGEX_AFTER_NAMES = frozenset(
    {"return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else"}
    | {"yield", "await"}
)
_NAME_START = re.compile(r"[A-Za-z_$\u0080-\U0010ffff]")
_NAME = re.compile(r"#?[A-Za-z_$\u0080-\U0010ffff][\w$\u0080-\U0010ffff]*")
_NUMBER = re.compile(r"(?:\d|\.\d)[\w.]*")
_CLOSERS = {")": "(", "]": "[", "}": "{"}


class _Lexer:
    def __init__(self, source: str, module: str) -> None:
        self.source = source
        self.module = module
        self.at = 0
        self.tokens: list[Token] = []
        self.stack: list[str] = []  # open brackets; "${" for a template literal's substitution

    def fail(self, message: str, at: int | None = None) -> BundleError:
        line = self.source.count("\n", 0, self.at if at is None else at) + 1
        return BundleError(f"{self.module}:{line}: {message}")

    def emit(self, kind: str, start: int) -> None:
        self.tokens.append(Token(kind, self.source[start : self.at], start, self.at, len(self.stack)))

    def regex_allowed(self) -> bool:
        if not self.tokens:
            return True
        last = self.tokens[-1]
        if last.kind == "name":
            return last.text in _REGEX_AFTER_NAMES
        if last.kind == "punct":
            return last.text not in (")", "]")
        # Inside a template literal's substitution (``${/re/.test(x)}``) an expression starts.
        return last.kind == "template" and last.text.endswith("${")

    def run(self) -> list[Token]:
        source = self.source
        while self.at < len(source):
            char = source[self.at]
            if char.isspace():
                self.at += 1
            elif source.startswith("//", self.at):
                end = source.find("\n", self.at)
                self.at = len(source) if end < 0 else end
            elif source.startswith("/*", self.at):
                end = source.find("*/", self.at + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.at = end + 2
            elif char in "'\"":
                self.string(char)
            elif char == "`":
                self.template(self.at)
            elif char == "/" and self.regex_allowed():
                self.regex()
            elif _NUMBER.match(source, self.at):
                match = _NUMBER.match(source, self.at)
                assert match is not None
                start, self.at = self.at, match.end()
                self.emit("number", start)
            elif _NAME_START.match(char) or (char == "#" and _NAME.match(source, self.at)):
                match = _NAME.match(source, self.at)
                if match is None:
                    raise self.fail(f"unexpected character {char!r}")
                start, self.at = self.at, match.end()
                self.emit("name", start)
            else:
                self.punctuator()
        if self.stack:
            raise self.fail(f"unclosed {self.stack[-1]!r} at the end of the module")
        return self.tokens

    def string(self, quote: str) -> None:
        start = self.at
        self.at += 1
        while True:
            if self.at >= len(self.source) or self.source[self.at] == "\n":
                raise self.fail("unterminated string", start)
            char = self.source[self.at]
            self.at += 2 if char == "\\" else 1
            if char == quote:
                break
        self.emit("string", start)

    def template(self, start: int) -> None:
        """From the character after a backtick or a substitution's ``}`` to the closing backtick (one
        token) or to ``${`` (the substitution's code is tokenized normally, one level deeper)."""
        self.at += 1
        while self.at < len(self.source):
            char = self.source[self.at]
            if char == "\\":
                self.at += 2
            elif char == "`":
                self.at += 1
                self.emit("template", start)
                return
            elif self.source.startswith("${", self.at):
                self.at += 2
                self.emit("template", start)
                self.stack.append("${")
                return
            else:
                self.at += 1
        raise self.fail("unterminated template literal", start)

    def regex(self) -> None:
        start = self.at
        self.at += 1
        in_class = False
        while True:
            if self.at >= len(self.source) or self.source[self.at] == "\n":
                raise self.fail("unterminated regular expression", start)
            char = self.source[self.at]
            self.at += 2 if char == "\\" else 1
            if char == "[":
                in_class = True
            elif char == "]":
                in_class = False
            elif char == "/" and not in_class:
                break
        while self.at < len(self.source) and self.source[self.at].isalpha():
            self.at += 1  # flags
        self.emit("regex", start)

    def punctuator(self) -> None:
        for text in _PUNCTUATORS:
            if self.source.startswith(text, self.at):
                break
        else:
            raise self.fail(f"unexpected character {self.source[self.at]!r}")
        start = self.at
        if text == "}" and self.stack and self.stack[-1] == "${":
            self.stack.pop()  # the substitution ends: the template literal goes on
            self.template(start)
            return
        if text in _CLOSERS:
            if not self.stack or self.stack[-1] != _CLOSERS[text]:
                raise self.fail(f"unbalanced {text!r}")
            self.stack.pop()
            self.at += 1
            self.emit("punct", start)
            return
        self.at += len(text)
        self.emit("punct", start)
        if text in ("(", "[", "{"):
            self.stack.append(text)


def tokenize(source: str, module: str) -> list[Token]:
    """The tokens of one module (comments and whitespace dropped); ``BundleError`` on what it cannot read.
    A token's ``depth`` counts the brackets open before it, so an opening bracket has the depth outside
    it and its closing bracket the same."""
    return _Lexer(source, module).run()
