//! `/asm/v1`: the instructions of a module's code range, for the front-end's assembly
//! view. Request and answer as in SPEC section 4 (samply's format).

use serde_json::{Value, json};

use super::{Api, ApiError, LibState, offset_field};
use crate::disasm;
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::store::codefile::{self, CodeQuery};

/// Larger ranges are refused: the view is for one function, and the answer of 1 MiB of
/// code is already some 10 MB of JSON.
pub const MAX_SIZE: u64 = 1 << 20;

/// Why no instructions are answered: the message of the 200 `{"error": …}` answer.
#[derive(Debug)]
pub enum AsmError {
    /// More bytes than one answer disassembles.
    TooBig(u64),
    /// No binary with the module's code: why each candidate was passed over.
    NoBinary { module: String, why: Vec<String> },
    /// The address is in no code section of the binary found.
    NotInCode {
        start: u64,
        path: std::path::PathBuf,
    },
}

impl std::fmt::Display for AsmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AsmError::TooBig(size) => write!(
                f,
                "{size:#x} bytes asked for; at most {MAX_SIZE:#x} are disassembled at once"
            ),
            AsmError::NoBinary { module, why } => {
                write!(f, "no binary with the code of {module}: {}", why.join("; "))
            }
            AsmError::NotInCode { start, path } => write!(
                f,
                "{start:#x} is not in a code section of {}",
                path.display()
            ),
        }
    }
}

/// An `/asm/v1` request, checked.
pub struct AsmRequest {
    debug_name: Option<String>,
    debug_id: Option<String>,
    name: Option<String>,
    code_id: Option<String>,
    start: u64,
    size: u64,
    until_function_end: bool,
}

fn opt_str(v: &Value, key: &str) -> Result<Option<String>, ApiError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ApiError::bad_request(format!("'{key}' must be a string"))),
    }
}

impl AsmRequest {
    pub fn parse(v: &Value) -> Result<AsmRequest, ApiError> {
        if !v.is_object() {
            return Err(ApiError::bad_request("the request must be a JSON object"));
        }
        let until_function_end = match v.get("continueUntilFunctionEnd") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ApiError::bad_request(
                    "'continueUntilFunctionEnd' must be a boolean",
                ));
            }
        };
        let req = AsmRequest {
            debug_name: opt_str(v, "debugName")?,
            debug_id: opt_str(v, "debugId")?,
            name: opt_str(v, "name")?,
            code_id: opt_str(v, "codeId")?,
            start: offset_field(v, "startAddress")?,
            size: offset_field(v, "size")?,
            until_function_end,
        };
        if req.debug_id.is_none() && req.code_id.is_none() {
            return Err(ApiError::bad_request(
                "one of 'debugId' and 'codeId' is needed to identify the module",
            ));
        }
        if req.debug_name.is_none() && req.name.is_none() {
            return Err(ApiError::bad_request(
                "one of 'debugName' and 'name' is needed to identify the module",
            ));
        }
        Ok(req)
    }
}

impl AsmRequest {
    /// The name the module goes by: its debug name, else the binary's.
    fn debug_name(&self) -> &str {
        self.debug_name
            .as_deref()
            .or(self.name.as_deref())
            .unwrap_or_default()
    }

    /// The module whose symbols name the code (function ends, branch targets), when the
    /// request gives a debug ID.
    pub(super) fn module(&self) -> Option<(&str, DebugId)> {
        let id = self.debug_id.as_deref()?;
        Some((self.debug_name(), DebugId::new(id)))
    }
}

impl Api {
    /// The lib entry for an `/asm/v1` request's module: without one in the profile, the
    /// request's own names stand in for it (a PE's binary is `name`, its debugName the
    /// PDB's).
    pub(super) fn asm_lib(&mut self, req: &AsmRequest) -> LibState {
        let Some((debug_name, id)) = req.module() else {
            return LibState::Known(None);
        };
        match self.lib(debug_name, &id) {
            LibState::Known(None) => LibState::Known(Some(Lib {
                debug_name: debug_name.to_string(),
                breakpad_id: id,
                name: req.name.clone(),
                code_id: req.code_id.clone(),
                ..Lib::default()
            })),
            known_or_reading => known_or_reading,
        }
    }

    /// `/asm/v1`: `Err` carries the message of a 200 `{"error": …}` answer.
    pub(super) fn asm(&mut self, req: &AsmRequest) -> Result<Value, AsmError> {
        let debug_name = req.debug_name();
        let lib = self.asm_lib(req).known();
        // The symbol side (function ends, target names): the same store as
        // /symbolicate/v5. Without it the code is still shown, unnamed.
        let module = req.debug_id.as_deref().and_then(|id| {
            let id = DebugId::new(id);
            self.store
                .module(debug_name, &id, lib.as_ref())
                .ready()
                .cloned()
        });
        let mut size = req.size;
        if req.until_function_end
            && let Some(sym) = module
                .as_ref()
                .and_then(|m| m.lookup_sorted(&[req.start]).ok()?.pop().flatten())
            && let Some(fsize) = sym.function_size
        {
            let end = (req.start - sym.function_offset).saturating_add(fsize);
            size = size.max(end.saturating_sub(req.start));
        }
        if size > MAX_SIZE {
            return Err(AsmError::TooBig(size));
        }
        let unique = self.store.code_candidates(
            debug_name,
            req.name.as_deref(),
            req.code_id.as_deref(),
            lib.as_ref(),
            module.as_ref().and_then(|m| m.local_debug_file()),
        );
        let query = CodeQuery {
            debug_id: req.debug_id.as_deref(),
            code_id: req.code_id.as_deref(),
        };
        // A macOS system library is no file: its code is in a dyld shared cache.
        let file = match codefile::find(&unique, &query) {
            Ok(f) => f,
            Err(mut why) => {
                let id = req
                    .debug_id
                    .clone()
                    .or_else(|| req.code_id.as_ref().map(|c| format!("{c}0")));
                let cached = match id {
                    Some(id) => self
                        .store
                        .dyld_code(debug_name, &DebugId::new(&id), lib.as_ref()),
                    None => Err(Vec::new()),
                };
                match cached {
                    Ok(f) => f,
                    Err(more) => {
                        why.extend(more);
                        return Err(AsmError::NoBinary {
                            module: debug_name.to_string(),
                            why,
                        });
                    }
                }
            }
        };
        let code = file.code_at(req.start).ok_or_else(|| AsmError::NotInCode {
            start: req.start,
            path: file.path.clone(),
        })?;
        let size = size.min(code.len() as u64);
        let mut instructions =
            disasm::disassemble(file.arch, code, req.start, size, &file.arm_modes);
        // Names of branch targets, in one ascending pass like a symbolication request.
        if let Some(m) = &module {
            let mut targets: Vec<u64> = instructions.iter().filter_map(|i| i.target).collect();
            targets.sort_unstable();
            targets.dedup();
            let names: std::collections::HashMap<u64, String> = targets
                .iter()
                .copied()
                .zip(m.lookup_sorted(&targets).unwrap_or_default())
                .filter_map(|(t, s)| {
                    let s = s?;
                    Some((
                        t,
                        if s.function_offset == 0 {
                            format!(" <{}>", s.function)
                        } else {
                            format!(" <{}+{:#x}>", s.function, s.function_offset)
                        },
                    ))
                })
                .collect();
            for i in &mut instructions {
                if let Some(n) = i.target.and_then(|t| names.get(&t)) {
                    i.text.push_str(n);
                }
            }
        }
        let list: Vec<Value> = instructions
            .into_iter()
            .map(|i| json!([i.offset, i.text]))
            .collect();
        Ok(json!({
            "startAddress": format!("{:#x}", req.start),
            "size": format!("{size:#x}"),
            "arch": file.arch.name(),
            "syntax": [file.arch.syntax()],
            "instructions": list,
        }))
    }
}
