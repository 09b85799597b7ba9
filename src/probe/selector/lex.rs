//! The selector's tokens, each with its 1-based column (in characters), for errors that point.

/// One token of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Name(String),
    /// `#enter`, `#loop_x`: the name without its `#`.
    Special(String),
    /// A number as written (`3`, `-1`, `3.7`, `1e-3`).
    Number(String),
    /// A quoted string, without its quotes.
    Str(String),
    /// `::` or `.` (ptera's `Type.method`).
    PathSep,
    /// `/` in ptera's `/module.path/f`.
    Slash,
    /// `//` in ptera's `//f`.
    SlashSlash,
    Gt,
    GtGt,
    Open,
    Close,
    Comma,
    Bang,
    BangBang,
    Star,
    Dollar,
    Colon,
    /// `@` in ptera's `x:@Tag` (the tag `Tag`).
    At,
    Eq,
    /// `~` before a match function (`i~every(3)`).
    Tilde,
    End,
    Invalid(char),
    /// A string whose closing quote is missing.
    Unterminated,
}

impl Token {
    pub(super) fn describe(&self) -> String {
        match self {
            Token::Name(n) => format!("`{n}`"),
            Token::Special(s) => format!("`#{s}`"),
            Token::Number(n) => format!("`{n}`"),
            Token::Str(s) => format!("`'{s}'`"),
            Token::PathSep => "`::`".into(),
            Token::Slash => "`/`".into(),
            Token::SlashSlash => "`//`".into(),
            Token::Gt => "`>`".into(),
            Token::GtGt => "`>>`".into(),
            Token::Open => "`(`".into(),
            Token::Close => "`)`".into(),
            Token::Comma => "`,`".into(),
            Token::Bang => "`!`".into(),
            Token::BangBang => "`!!`".into(),
            Token::Star => "`*`".into(),
            Token::Dollar => "`$`".into(),
            Token::Colon => "`:`".into(),
            Token::At => "`@`".into(),
            Token::Eq => "`=`".into(),
            Token::Tilde => "`~`".into(),
            Token::End => "the end".into(),
            Token::Invalid(c) => format!("`{c}`"),
            Token::Unterminated => "a string without its closing quote".into(),
        }
    }
}

pub(super) fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The length of the number at the start of `chars` (`-`? digits (`.` digits)? exponent?).
fn number_len(chars: &[char]) -> usize {
    let digits = |from: usize| {
        chars[from..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut len = usize::from(chars[0] == '-');
    len += digits(len);
    if chars.get(len) == Some(&'.') && chars.get(len + 1).is_some_and(char::is_ascii_digit) {
        len += 1 + digits(len + 1);
    }
    if matches!(chars.get(len), Some('e' | 'E')) {
        let sign = usize::from(matches!(chars.get(len + 1), Some('+' | '-')));
        if chars.get(len + 1 + sign).is_some_and(char::is_ascii_digit) {
            len += 1 + sign + digits(len + 1 + sign);
        }
    }
    len
}

/// The tokens of `text` with their 1-based columns, ending with [`Token::End`].
pub(super) fn tokenize(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let next = chars.get(i + 1).copied();
        let (token, len) = match c {
            c if c.is_whitespace() => {
                i += 1;
                continue;
            }
            ':' if next == Some(':') => (Token::PathSep, 2),
            ':' => (Token::Colon, 1),
            '.' => (Token::PathSep, 1),
            '/' if next == Some('/') => (Token::SlashSlash, 2),
            '/' => (Token::Slash, 1),
            '>' if next == Some('>') => (Token::GtGt, 2),
            '>' => (Token::Gt, 1),
            '(' => (Token::Open, 1),
            ')' => (Token::Close, 1),
            ',' => (Token::Comma, 1),
            '!' if next == Some('!') => (Token::BangBang, 2),
            '!' => (Token::Bang, 1),
            '*' => (Token::Star, 1),
            '$' => (Token::Dollar, 1),
            '@' => (Token::At, 1),
            '=' => (Token::Eq, 1),
            '~' => (Token::Tilde, 1),
            '\'' | '"' => match chars[i + 1..].iter().position(|q| *q == c) {
                Some(end) => (
                    Token::Str(chars[i + 1..i + 1 + end].iter().collect()),
                    end + 2,
                ),
                None => (Token::Unterminated, chars.len() - i),
            },
            '#' if next.is_some_and(is_name_start) => {
                let len = 1 + chars[i + 1..]
                    .iter()
                    .take_while(|c| is_name_char(**c))
                    .count();
                (Token::Special(chars[i + 1..i + len].iter().collect()), len)
            }
            c if c.is_ascii_digit() || (c == '-' && next.is_some_and(|n| n.is_ascii_digit())) => {
                let len = number_len(&chars[i..]);
                (Token::Number(chars[i..i + len].iter().collect()), len)
            }
            c if is_name_start(c) => {
                let len = chars[i..].iter().take_while(|c| is_name_char(**c)).count();
                (Token::Name(chars[i..i + len].iter().collect()), len)
            }
            other => (Token::Invalid(other), 1),
        };
        tokens.push((token, column));
        i += len;
    }
    tokens.push((Token::End, chars.len() + 1));
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token> {
        tokenize(text).into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn numbers_strings_and_ptera_punctuation() {
        assert_eq!(
            kinds("f(x=-1.5e3) > $y:T"),
            [
                Token::Name("f".into()),
                Token::Open,
                Token::Name("x".into()),
                Token::Eq,
                Token::Number("-1.5e3".into()),
                Token::Close,
                Token::Gt,
                Token::Dollar,
                Token::Name("y".into()),
                Token::Colon,
                Token::Name("T".into()),
                Token::End,
            ]
        );
        assert_eq!(
            kinds("//A.f x='a b'"),
            [
                Token::SlashSlash,
                Token::Name("A".into()),
                Token::PathSep,
                Token::Name("f".into()),
                Token::Name("x".into()),
                Token::Eq,
                Token::Str("a b".into()),
                Token::End,
            ]
        );
        assert_eq!(kinds("x='ab")[2], Token::Unterminated);
    }
}
