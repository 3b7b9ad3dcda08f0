//! The test kit's databases and gate helpers, and the web page's harness.

#![allow(dead_code, unused_imports)]

pub(crate) use hooks_testkit::database::*;
pub(crate) use hooks_testkit::gate::*;

pub(crate) mod web;
