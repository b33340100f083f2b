/* Test shim for scripts/windows-lane only, never shipped: Rust's standard library imports
 * ProcessPrng from bcryptprimitives.dll (Windows 10+); wine 8.0 (Debian 12) has no such
 * DLL. Placed beside the .exe under test, this one answers with RtlGenRandom
 * (SystemFunction036 in advapi32), which wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG n = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, n)) return FALSE;
    data += n;
    length -= n;
  }
  return TRUE;
}
