package io.gospan.receiver.version;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class GospanVersionTest {

  @Test
  void isTheVersionOfTheBuild() throws Exception {
    // receiver/pom.xml's parent version is the project version (surefire runs in receiver/)
    String pom = Files.readString(Path.of("pom.xml"));
    Matcher m = Pattern.compile("<parent>.*?<version>([^<]+)</version>.*?</parent>", Pattern.DOTALL).matcher(pom);
    assertThat(m.find()).as("receiver/pom.xml names its parent's version").isTrue();
    assertThat(GospanVersion.get()).isEqualTo(m.group(1)).doesNotContain("${");
  }
}
