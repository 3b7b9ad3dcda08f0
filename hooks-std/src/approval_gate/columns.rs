//! The enum columns of `confirmation_requests`, decoded by sqlx.
//!
//! `status`, `approver_scope` and `mode` are stored as text (readable in any SQL
//! client, checkable by a constraint) and read straight into their enums,
//! on SQLite and PostgreSQL alike. A value this crate does not know is a
//! decode error naming the column and the value, never a guess: a row read
//! as `pending` could be approved, a row read under another scope could be
//! decided by the wrong person.

use sqlx::error::BoxDynError;

use super::request::{ApproverScope, ConfirmationMode, ConfirmationStatus};

/// A `confirmation_requests` row holds a value this crate does not know: the
/// row was written by another program or a newer version. The row is not
/// used; correct the value in the database or upgrade.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "confirmation_requests.{column} holds an unknown value \"{value}\" (expected one of \
     {expected}); the row was not written by this version of hooks-std: correct it in the \
     database or upgrade"
)]
pub struct UnknownColumnValue {
    /// The column.
    pub column: &'static str,
    /// The value found.
    pub value: String,
    /// The values this crate reads.
    pub expected: &'static str,
}

/// Makes a text-backed enum a sqlx column type on every database whose text
/// type `String` is: `TryFrom<String>` through its `parse`, refusing any other
/// value with an [`UnknownColumnValue`] that names the column and the values
/// this crate reads.
macro_rules! text_column {
    ($($enum:ty => $column:literal: $expected:literal),* $(,)?) => {$(
        impl TryFrom<String> for $enum {
            type Error = UnknownColumnValue;

            fn try_from(text: String) -> Result<Self, Self::Error> {
                Self::parse(&text).ok_or(UnknownColumnValue {
                    column: $column,
                    value: text,
                    expected: $expected,
                })
            }
        }

        impl<DB: sqlx::Database> sqlx::Type<DB> for $enum
        where
            String: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <String as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <String as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $enum
        where
            String: sqlx::Decode<'r, DB>,
        {
            fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
                let text = <String as sqlx::Decode<'r, DB>>::decode(value)?;
                Ok(Self::try_from(text)?)
            }
        }
    )*};
}

text_column!(
    ConfirmationStatus => "status": "pending, approved, rejected, expired, cancelled",
    ApproverScope => "approver_scope": "initiator, agent_owner, org_members, allowlist",
    ConfirmationMode => "mode": "metadata, require_all, when, ask",
);
