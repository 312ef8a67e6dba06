//! The two kinds of declaration (`codes!`, `record!`), what they tell the Java generator, and how a
//! record's fields reach the Java object: by name, with the field ids looked up once.

use std::sync::OnceLock;

use jni::objects::{JClass, JFieldID, JObject, JValueOwned};
use jni::JNIEnv;

use crate::guard::Failure;

/// A field's type, as the generated Java declares it and JNI names it.
#[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
pub(crate) struct JavaType {
    /// The Java type of the field.
    pub(crate) java: &'static str,
    /// Its JNI signature.
    pub(crate) signature: &'static str,
    /// For a code: the generated enum it is a constant of (the field holds the code, an accessor
    /// of the same name gives the constant).
    pub(crate) codes: Option<&'static str>,
}

/// A record's field, for the generator and the field id lookup.
#[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
pub(crate) struct Field {
    /// The Rust name (snake case); the Java name is its camel case.
    pub(crate) name: &'static str,
    pub(crate) ty: JavaType,
    pub(crate) doc: &'static [&'static str],
}

/// A record's declaration.
#[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
pub(crate) struct Record {
    pub(crate) name: &'static str,
    pub(crate) doc: &'static [&'static str],
    pub(crate) fields: &'static [Field],
}

/// A list of codes' declaration: the Java enum's constants, in their order (the code is the
/// ordinal).
#[cfg_attr(not(test), allow(dead_code))] // read by the generator, a test
pub(crate) struct Codes {
    pub(crate) name: &'static str,
    pub(crate) doc: &'static [&'static str],
    pub(crate) constants: &'static [(&'static str, &'static [&'static str])],
}

/// A value that a record's field holds.
pub(crate) trait ToField {
    const TYPE: JavaType;
    fn value<'l>(self, env: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure>;
}

impl ToField for i64 {
    const TYPE: JavaType = JavaType {
        java: "long",
        signature: "J",
        codes: None,
    };
    fn value<'l>(self, _: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure> {
        Ok(JValueOwned::Long(self))
    }
}

impl ToField for bool {
    const TYPE: JavaType = JavaType {
        java: "boolean",
        signature: "Z",
        codes: None,
    };
    fn value<'l>(self, _: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure> {
        Ok(JValueOwned::Bool(self.into()))
    }
}

/// A warning for Java to log, or none: escaped as every message for a person is
/// (`dibs_core::shown`), as it may carry what a server said or what Redis holds.
pub(crate) struct Warning(pub(crate) Option<String>);

impl ToField for Warning {
    const TYPE: JavaType = JavaType {
        java: "String",
        signature: "Ljava/lang/String;",
        codes: None,
    };
    fn value<'l>(self, env: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure> {
        Ok(JValueOwned::Object(match self.0 {
            Some(text) => env.new_string(dibs_core::shown(&text))?.into(),
            None => JObject::null(),
        }))
    }
}

impl ToField for String {
    const TYPE: JavaType = JavaType {
        java: "String",
        signature: "Ljava/lang/String;",
        codes: None,
    };
    fn value<'l>(self, env: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure> {
        Ok(JValueOwned::Object(env.new_string(self)?.into()))
    }
}

/// A text that may be absent: null in Java.
impl ToField for Option<String> {
    const TYPE: JavaType = String::TYPE;
    fn value<'l>(self, env: &mut JNIEnv<'l>) -> Result<JValueOwned<'l>, Failure> {
        match self {
            Some(text) => text.value(env),
            None => Ok(JValueOwned::Object(JObject::null())),
        }
    }
}

/// The field ids of one record's Java class (`dibs.Border$<name>`), looked up on first use. No
/// reference to the class is kept: the ids stay valid while the class is loaded, which it is while
/// this library is (both belong to one class loader), and a kept reference would stop a
/// redeployed application's class loader, and this library's copy, from ever being unloaded.
pub(crate) struct FieldIds(OnceLock<Vec<JFieldID>>);

impl FieldIds {
    pub(crate) const fn new() -> Self {
        FieldIds(OnceLock::new())
    }

    /// The ids of `record`'s fields, in declaration order.
    pub(crate) fn of(&self, env: &mut JNIEnv, record: &Record) -> Result<&[JFieldID], Failure> {
        if let Some(ids) = self.0.get() {
            return Ok(ids);
        }
        let class = class(env, record)?;
        let mut ids = Vec::with_capacity(record.fields.len());
        for field in record.fields {
            ids.push(env.get_field_id(&class, camel_case(field.name), field.ty.signature)?);
        }
        env.delete_local_ref(class)?;
        Ok(self.0.get_or_init(|| ids))
    }
}

/// A record's Java class, found by the calling Java method's class loader.
pub(crate) fn class<'l>(env: &mut JNIEnv<'l>, record: &Record) -> Result<JClass<'l>, Failure> {
    Ok(env.find_class(format!("dibs/Border${}", record.name))?)
}

/// Sets one field of a record's Java object; a reference made for the value is let go at once
/// (a list of 10,000 records would otherwise hold one local reference a text until it returns).
pub(crate) fn set(
    env: &mut JNIEnv,
    object: &JObject,
    id: JFieldID,
    value: JValueOwned,
) -> Result<(), Failure> {
    // `id` was looked up in this record's class with this field's signature (FieldIds), and
    // `value` is of the type that signature names (ToField): jni checks the type too.
    env.set_field_unchecked(object, id, value.borrow())?;
    if let JValueOwned::Object(made) = value {
        if !made.is_null() {
            env.delete_local_ref(made)?;
        }
    }
    Ok(())
}

/// `lease_id` -> `leaseId`: a field's Java name.
pub(crate) fn camel_case(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Codes: a Rust enum and the Java enum generated from it, whose ordinal is the code.
macro_rules! codes {
    ($(#[doc = $doc:literal])+ $name:ident { $($(#[doc = $vdoc:literal])+ $variant:ident,)+ }) => {
        $(#[doc = $doc])+
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $name {
            $($(#[doc = $vdoc])+ $variant,)+
        }

        impl $name {
            const ALL: &'static [$name] = &[$($name::$variant,)+];

            #[cfg_attr(not(test), allow(dead_code))] // the generator's (a test)
            pub(crate) const JAVA: $crate::border::declare::Codes = $crate::border::declare::Codes {
                name: stringify!($name),
                doc: &[$($doc,)+],
                constants: &[$((stringify!($variant), &[$($vdoc,)+]),)+],
            };

            /// The code Java sends back, or None for one that is not a code of this list.
            #[allow(dead_code)] // not every list crosses from Java to Rust
            pub(crate) fn from_code(code: jni::sys::jint) -> Option<Self> {
                usize::try_from(code).ok().and_then(|i| Self::ALL.get(i)).copied()
            }

            pub(crate) fn code(self) -> jni::sys::jint {
                self as jni::sys::jint
            }
        }

        impl $crate::border::declare::ToField for $name {
            const TYPE: $crate::border::declare::JavaType = $crate::border::declare::JavaType {
                java: "int",
                signature: "I",
                codes: Some(stringify!($name)),
            };
            fn value<'l>(
                self,
                _: &mut jni::JNIEnv<'l>,
            ) -> Result<jni::objects::JValueOwned<'l>, $crate::guard::Failure> {
                Ok(jni::objects::JValueOwned::Int(self.code()))
            }
        }
    };
}

/// A record: a Rust struct, and the Java class generated from it that Java makes and Rust fills.
macro_rules! record {
    ($(#[doc = $doc:literal])+ $name:ident { $($(#[doc = $fdoc:literal])+ $field:ident: $ty:ty,)+ }) => {
        $(#[doc = $doc])+
        pub(crate) struct $name {
            $($(#[doc = $fdoc])+ pub(crate) $field: $ty,)+
        }

        impl $name {
            pub(crate) const JAVA: $crate::border::declare::Record = $crate::border::declare::Record {
                name: stringify!($name),
                doc: &[$($doc,)+],
                fields: &[$($crate::border::declare::Field {
                    name: stringify!($field),
                    ty: <$ty as $crate::border::declare::ToField>::TYPE,
                    doc: &[$($fdoc,)+],
                },)+],
            };

            /// Sets every field of `into`, a `dibs.Border.` object of this name.
            pub(crate) fn write(
                self,
                env: &mut jni::JNIEnv,
                into: &jni::objects::JObject,
            ) -> Result<(), $crate::guard::Failure> {
                static IDS: $crate::border::declare::FieldIds = $crate::border::declare::FieldIds::new();
                let ids = IDS.of(env, &Self::JAVA)?;
                let mut ids = ids.iter().copied();
                $(
                    let value = $crate::border::declare::ToField::value(self.$field, env)?;
                    let id = ids.next().expect("one id a field");
                    $crate::border::declare::set(env, into, id, value)?;
                )+
                Ok(())
            }

            /// A new Java object of this record, filled (for what Rust returns).
            #[allow(dead_code)] // not every record is made in Rust
            pub(crate) fn new_java<'l>(
                self,
                env: &mut jni::JNIEnv<'l>,
            ) -> Result<jni::objects::JObject<'l>, $crate::guard::Failure> {
                let class = $crate::border::declare::class(env, &Self::JAVA)?;
                let object = self.new_java_of(env, &class)?;
                env.delete_local_ref(class)?;
                Ok(object)
            }

            /// A new Java object of this record, of its `class` found already.
            fn new_java_of<'l>(
                self,
                env: &mut jni::JNIEnv<'l>,
                class: &jni::objects::JClass,
            ) -> Result<jni::objects::JObject<'l>, $crate::guard::Failure> {
                let object = env.alloc_object(class)?;
                self.write(env, &object)?;
                Ok(object)
            }
        }

        /// One such record, made in Rust.
        impl $crate::border::declare::ToField for $name {
            const TYPE: $crate::border::declare::JavaType = $crate::border::declare::JavaType {
                java: stringify!($name),
                signature: concat!("Ldibs/Border$", stringify!($name), ";"),
                codes: None,
            };
            fn value<'l>(
                self,
                env: &mut jni::JNIEnv<'l>,
            ) -> Result<jni::objects::JValueOwned<'l>, $crate::guard::Failure> {
                Ok(jni::objects::JValueOwned::Object(self.new_java(env)?))
            }
        }

        /// One such record or none: null in Java.
        impl $crate::border::declare::ToField for Option<$name> {
            const TYPE: $crate::border::declare::JavaType =
                <$name as $crate::border::declare::ToField>::TYPE;
            fn value<'l>(
                self,
                env: &mut jni::JNIEnv<'l>,
            ) -> Result<jni::objects::JValueOwned<'l>, $crate::guard::Failure> {
                match self {
                    Some(record) => $crate::border::declare::ToField::value(record, env),
                    None => Ok(jni::objects::JValueOwned::Object(jni::objects::JObject::null())),
                }
            }
        }

        /// A list of these records: a Java array.
        impl $crate::border::declare::ToField for Vec<$name> {
            const TYPE: $crate::border::declare::JavaType = $crate::border::declare::JavaType {
                java: concat!(stringify!($name), "[]"),
                signature: concat!("[Ldibs/Border$", stringify!($name), ";"),
                codes: None,
            };
            fn value<'l>(
                self,
                env: &mut jni::JNIEnv<'l>,
            ) -> Result<jni::objects::JValueOwned<'l>, $crate::guard::Failure> {
                let class = $crate::border::declare::class(env, &$name::JAVA)?;
                let length = i32::try_from(self.len()).unwrap_or(i32::MAX);
                let array = env.new_object_array(length, &class, jni::objects::JObject::null())?;
                for (i, item) in self.into_iter().enumerate().take(length as usize) {
                    let object = item.new_java_of(env, &class)?;
                    env.set_object_array_element(&array, i as i32, &object)?;
                    env.delete_local_ref(object)?;
                }
                env.delete_local_ref(class)?;
                Ok(jni::objects::JValueOwned::Object(array.into()))
            }
        }
    };
}
