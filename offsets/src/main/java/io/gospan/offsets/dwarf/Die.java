package io.gospan.offsets.dwarf;

import java.util.Arrays;

/**
 * A decoded DIE (DWARF 5 section 2.1), reused across reads where the caller allows. Attribute values:
 * constants, addresses, indices and section offsets as read; references as absolute {@code .debug_info}
 * offsets; strings ({@code DW_FORM_string}) and blocks as the offset of their bytes in {@code .debug_info}
 * with the length in {@link #lens}. See {@link FormTable}.
 */
final class Die {
  int offset;
  Unit unit;
  /** DW_TAG_*, 0 for the null entry that ends a list of children. */
  int tag;
  boolean children;
  /** Number of attributes. */
  int count;
  int[] attrs = new int[16];
  /** The form of each attribute, DW_FORM_indirect already resolved. */
  int[] forms = new int[16];
  long[] vals = new long[16];
  int[] lens = new int[16];
  /** Offset of the DIE that follows this one in {@code .debug_info} (its first child, when it has any). */
  int next;

  /** Index of attribute {@code attr}, or -1. */
  int find(int attr) {
    for (int i = 0; i < count; i++) {
      if (attrs[i] == attr) {
        return i;
      }
    }
    return -1;
  }

  void ensure(int n) {
    if (attrs.length < n) {
      attrs = Arrays.copyOf(attrs, n);
      forms = Arrays.copyOf(forms, n);
      vals = Arrays.copyOf(vals, n);
      lens = Arrays.copyOf(lens, n);
    }
  }
}
