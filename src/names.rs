//! Enums whose values each have one name, used alike on the command line, in tables
//! and in result files: [`named!`](crate::named) declares one with its list of
//! values, its names, `Display`, a `FromStr` that lists the choices when it fails,
//! and serde by its name (a result file holds the name, never a number).

/// Declares a named enum:
///
/// ```
/// sockbench::named! {
///     /// A colour.
///     pub enum Colour as "colour" {
///         Red = "red",
///         Green = "green" | "grün",
///     }
/// }
/// assert_eq!("grün".parse::<Colour>(), Ok(Colour::Green));
/// assert_eq!(Colour::Red.to_string(), "red");
/// assert_eq!(serde_json::to_string(&Colour::Green).unwrap(), r#""green""#);
/// assert_eq!(serde_json::from_str::<Colour>(r#""grün""#).unwrap(), Colour::Green);
/// assert_eq!(
///     "blue".parse::<Colour>().unwrap_err(),
///     "unknown colour 'blue'; choose from red, green"
/// );
/// ```
///
/// A value may take other spellings after `|`; it is always printed by its first.
#[macro_export]
macro_rules! named {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident as $what:literal {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal $(| $alias:literal)*),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in the order they are declared (and listed).
            pub const ALL: [$name; [$($text),+].len()] = [$($name::$variant),+];

            /// The name on the command line, in tables and in result files.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text $(| $alias)* => Ok($name::$variant),)+
                    _ => Err($crate::names::unknown($what, s, &$name::ALL.map($name::name))),
                }
            }
        }

        impl $crate::names::Named for $name {
            fn names() -> &'static [&'static str] {
                &[$($text),+]
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(d)?;
                text.parse().map_err(::serde::de::Error::custom)
            }
        }

        impl ::clap::builder::ValueParserFactory for $name {
            type Parser = $crate::names::NamedParser<$name>;

            fn value_parser() -> Self::Parser {
                $crate::names::NamedParser::default()
            }
        }
    };
}

/// A named enum's list of names, for [`NamedParser`].
pub trait Named: std::str::FromStr<Err = String> + Clone + Send + Sync + 'static {
    /// The first name of every value, in declaration order.
    fn names() -> &'static [&'static str];
}

/// How clap reads a named enum on the command line: by its `FromStr` (so a wrong
/// value gets its list of choices in one line), and telling clap the names, so
/// that shell completions offer them instead of file names.
pub struct NamedParser<T>(std::marker::PhantomData<fn() -> T>);

impl<T> Default for NamedParser<T> {
    fn default() -> Self {
        NamedParser(std::marker::PhantomData)
    }
}

impl<T> Clone for NamedParser<T> {
    fn clone(&self) -> Self {
        NamedParser::default()
    }
}

impl<T: Named> clap::builder::TypedValueParser for NamedParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let parse: fn(&str) -> Result<T, String> = |s| s.parse();
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            T::names().iter().map(clap::builder::PossibleValue::new),
        ))
    }
}

/// The message for a name that is none of `names`.
pub fn unknown(what: &str, given: &str, names: &[&str]) -> String {
    format!("unknown {what} '{given}'; choose from {}", names.join(", "))
}
