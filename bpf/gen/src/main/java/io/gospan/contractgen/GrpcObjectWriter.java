package io.gospan.contractgen;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes {@code io.gospan.receiver.probe.GrpcObject} (template {@code GrpcObject.java.mustache}): the
 * object's maps (the variables of section {@code .maps}) and settings (section {@code .rodata}) with
 * their sizes, from its BTF.
 */
final class GrpcObjectWriter {

  record Item(String cName, String name, int size, String sep) {}

  record Model(List<Item> maps, List<Item> settings) {}

  private GrpcObjectWriter() {}

  static String write(Btf btf) {
    return Template.render("GrpcObject", new Model(items(btf, ".maps"), items(btf, ".rodata")));
  }

  private static List<Item> items(Btf btf, String section) {
    List<Btf.Variable> vars = btf.section(section);
    List<Item> out = new ArrayList<>();
    for (int i = 0; i < vars.size(); i++) {
      Btf.Variable v = vars.get(i);
      if (!v.name().matches("[a-z][a-z0-9_]*")) {
        throw new IllegalStateException(section + ": " + v.name() + " is not a lower-case C identifier");
      }
      out.add(new Item(v.name(), v.name().toUpperCase(Locale.ROOT), v.size(), Template.enumSeparator(i, vars.size())));
    }
    return out;
  }
}
