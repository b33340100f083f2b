//! The types every layer shares, at the bottom so that each layer imports only from
//! below: the debug and code IDs, one library of the profile, the options that say
//! where debug information is looked for, and the checks that turn names from a profile
//! into path components.

pub mod debugid;
pub mod library;
pub mod options;
pub mod pathname;
