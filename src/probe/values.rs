//! How a probed variable becomes a [`Value`]: at run time, by its type.
//!
//! The hooks call [`value_of`] with no bound on the type, so instrumenting a function never
//! fails to compile, even where a binding's type is still being inferred (`let mut v =
//! Vec::new();`) or mentions a type parameter. The types giving converts by value — numbers,
//! `bool`, `char`, strings, [`Value`], [`LazyValue`], and references, vectors, slices and
//! options of them — are recognised by their type id; anything else gives its type's name.

use std::any::TypeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::{LazyValue, Value};

/// Reads the value behind a pointer to the type it was registered for.
type Convert = fn(*const ()) -> Value;

/// Hashes a `TypeId` by the bits it already is (a hash of the type): each probed assignment
/// looks its type up, and SipHash there cost more than the rest of the conversion.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // `TypeId` writes integers (below); any other input still hashes, byte by byte.
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = self.0.rotate_left(32) ^ n;
    }

    fn write_u128(&mut self, n: u128) {
        self.write_u64(n as u64 ^ (n >> 64) as u64);
    }
}

/// A map keyed by type id.
type IdMap<V> = HashMap<TypeId, V, BuildHasherDefault<IdHasher>>;

macro_rules! table {
    ($map:ident; $($s:ty),* $(,)?) => {$(
        // SAFETY (every entry): `value_of` calls the entry of `TypeId::of::<X>()` only with a
        // pointer to a live `X` (up to lifetimes, which `typeid` erases); the entry clones what
        // it reads into an owned `Value` before returning, so no borrow outlives the call.
        $map.insert(TypeId::of::<$s>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { &*p.cast::<$s>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<&'static $s>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { *p.cast::<&$s>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<&'static mut $s>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { &**p.cast::<&mut $s>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<Vec<$s>>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { &*p.cast::<Vec<$s>>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<&'static Vec<$s>>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { *p.cast::<&Vec<$s>>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<&'static [$s]>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { *p.cast::<&[$s]>() }.to_vec())
        }) as Convert);
        $map.insert(TypeId::of::<Option<$s>>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { &*p.cast::<Option<$s>>() }.clone())
        }) as Convert);
        $map.insert(TypeId::of::<&'static Option<$s>>(), (|p| {
            // SAFETY: `p` points to a live value of this entry's type (the argument above).
            Value::from(unsafe { *p.cast::<&Option<$s>>() }.clone())
        }) as Convert);
    )*};
}

fn table() -> &'static IdMap<Convert> {
    static TABLE: OnceLock<IdMap<Convert>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: IdMap<Convert> = IdMap::default();
        table!(map; i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64, bool, String,
            Value, LazyValue, Arc<str>);
        // The three entries below follow the table's argument: `value_of` passes a pointer to a
        // live value of the entry's type, and each entry copies what it reads before returning.
        map.insert(
            TypeId::of::<&'static str>(),
            (|p| {
                // SAFETY: `p` points to a live `&str` (the table's argument).
                Value::from(unsafe { *p.cast::<&str>() })
            }) as Convert,
        );
        map.insert(
            TypeId::of::<&'static String>(),
            (|p| {
                // SAFETY: `p` points to a live `&String` (the table's argument).
                Value::from(unsafe { *p.cast::<&String>() })
            }) as Convert,
        );
        map.insert(
            TypeId::of::<char>(),
            (|p| {
                // SAFETY: `p` points to a live `char` (the table's argument).
                Value::from(unsafe { *p.cast::<char>() }.to_string())
            }) as Convert,
        );
        map.insert(TypeId::of::<()>(), (|_| Value::Null) as Convert);
        map
    })
}

/// Conversions registered with [`register_value`].
static REGISTERED: RwLock<Option<IdMap<Registered>>> = RwLock::new(None);

/// A registered conversion, and how to call it with an erased pointer.
#[derive(Clone, Copy)]
struct Registered {
    convert: *const (),
    call: fn(*const (), *const ()) -> Value,
}

// SAFETY: `convert` is a `fn(&T) -> Value` pointer: code, shareable between threads.
unsafe impl Send for Registered {}
// SAFETY: as for `Send`: both fields are function pointers, immutable code.
unsafe impl Sync for Registered {}

/// Makes probes give variables of type `T` as `convert(&x)` instead of the type's name: how
/// `giving-burn` gives tensors lazily. A later registration for the same type replaces the
/// earlier one.
///
/// # Safety
///
/// `T` must have no lifetime parameters. Types are matched by their id with lifetimes erased
/// (a binding's type is not `'static` in general), so a registration for `Foo<'static>` would
/// also receive `Foo<'a>`, and `convert` could keep a borrow past its end.
///
/// ```
/// use giving::Value;
///
/// struct Celsius(f64);
///
/// // SAFETY: `Celsius` has no lifetime parameters.
/// unsafe { giving::probe::register_value::<Celsius>(|c| Value::F64(c.0)) };
///
/// #[giving::probe]
/// fn warm(t: f64) -> f64 {
///     let temperature = Celsius(t + 1.0);
///     temperature.0
/// }
///
/// let gv = giving::given();
/// let probe = gv.probe("warm > temperature").unwrap();
/// warm(20.0);
/// gv.finish().unwrap();
/// let events: Vec<_> = futures::executor::block_on(futures::StreamExt::collect(probe));
/// assert_eq!(events[0].get_as::<f64>("temperature").unwrap(), 21.0);
/// ```
pub unsafe fn register_value<T: 'static>(convert: fn(&T) -> Value) {
    fn call<T>(convert: *const (), x: *const ()) -> Value {
        // SAFETY: `convert` was registered as a `fn(&T) -> Value` for this type id, and `x`
        // points to a live value of that type (see `value_of`).
        let convert: fn(&T) -> Value = unsafe { std::mem::transmute(convert) };
        // SAFETY: `x` points to a live `T` for the whole call (see `value_of`).
        convert(unsafe { &*x.cast::<T>() })
    }
    let entry = Registered {
        convert: convert as *const (),
        call: call::<T>,
    };
    REGISTERED
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(IdMap::default)
        .insert(TypeId::of::<T>(), entry);
}

/// The value of `x` if its type is one giving converts, its type's name otherwise.
#[doc(hidden)]
pub fn value_of<T>(x: &T) -> Value {
    let id = typeid::of::<T>();
    let pointer = (x as *const T).cast::<()>();
    // The numbers and `bool` first, by a comparison the compiler folds for each `T`: the
    // table's lookup cost as much as the rest of a probed event's conversion.
    macro_rules! scalar {
        ($($s:ty),*) => {$(
            if id == TypeId::of::<$s>() {
                // SAFETY: `x` is a live `T`, and `T` is `$s` (same type id; `$s` has no
                // lifetimes to erase).
                return Value::from(unsafe { *pointer.cast::<$s>() });
            }
        )*};
    }
    scalar!(f64, f32, i64, i32, u64, u32, usize, isize, bool);
    if let Some(convert) = table().get(&id) {
        return convert(pointer);
    }
    let registered = REGISTERED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|map| map.get(&id).copied());
    match registered {
        Some(entry) => (entry.call)(entry.convert, pointer),
        None => Value::from(std::any::type_name::<T>()),
    }
}

/// The `Ok` value of a returned `Result` (`null` for an `Err`, which `#error` reports).
#[doc(hidden)]
pub fn ok_value_of<T, E>(result: &Result<T, E>) -> Value {
    match result {
        Ok(value) => value_of(value),
        Err(_) => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_types_give_values_and_others_their_name() {
        assert_eq!(value_of(&1.5_f64), Value::F64(1.5));
        assert_eq!(value_of(&3_u32), Value::U64(3));
        assert_eq!(value_of(&"abc"), Value::from("abc"));
        let owned = String::from("xyz");
        assert_eq!(value_of(&&owned), Value::from("xyz"));
        assert_eq!(value_of(&vec![1_i32, 2]), Value::from(vec![1_i64, 2]));
        assert_eq!(value_of(&&[1.0_f32][..]), Value::from(vec![1.0_f64]));
        assert_eq!(value_of(&Some(2_u8)), Value::U64(2));
        assert_eq!(value_of(&None::<u8>), Value::Null);
        assert_eq!(value_of(&'c'), Value::from("c"));
        struct Opaque;
        assert_eq!(
            value_of(&Opaque),
            Value::from(
                "giving::probe::values::tests::known_types_give_values_and_others_their_name::Opaque"
            )
        );
        assert_eq!(ok_value_of::<f64, ()>(&Ok(2.0)), Value::F64(2.0));
        assert_eq!(ok_value_of::<f64, ()>(&Err(())), Value::Null);
    }

    #[test]
    fn a_registered_conversion_receives_the_value_through_its_erased_pointers() {
        struct Celsius(f64);
        // SAFETY: `Celsius` has no lifetime parameters.
        unsafe { register_value::<Celsius>(|c| Value::F64(c.0 + 0.5)) };
        assert_eq!(value_of(&Celsius(20.0)), Value::F64(20.5));
        // A later registration replaces the earlier one.
        // SAFETY: as above.
        unsafe { register_value::<Celsius>(|c| Value::F64(-c.0)) };
        assert_eq!(value_of(&Celsius(3.0)), Value::F64(-3.0));
    }
}
