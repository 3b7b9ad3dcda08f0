//! Feishu (and Lark): approval cards through the Open API, verified callbacks.
