#[cfg(feature = "logging")]
macro_rules! log {
    ( $fmt:expr ) => {
        println!($fmt);
    };
    ( $fmt:expr, $($x:tt)* ) => {
        println!($fmt, $($x)*);
    }
}

#[cfg(not(feature = "logging"))]
macro_rules! log {
    ( $fmt:expr ) => {};
    // PATCH: the arguments are not type-checked without the feature: some are `dyn`
    // nodes, which are `Debug` only with it (`ast::MaybeDebug`).
    ( $fmt:expr, $($x:expr),* $(,)? ) => {
        if false { $( let _ = &$x; )* }
    };
}
