package io.gospan.receiver.export;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Self-signed certificates for TLS tests, made with the JDK's keytool (no test dependency, nothing committed). */
final class TestCerts {
  final Path cert;
  final Path key;

  private TestCerts(Path cert, Path key) {
    this.cert = cert;
    this.key = key;
  }

  /** A self-signed RSA certificate for 127.0.0.1/localhost and its PKCS#8 key, as PEM files in {@code dir}. */
  static TestCerts create(Path dir, String name) throws Exception {
    Path store = dir.resolve(name + ".p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p =
        new ProcessBuilder(
                List.of(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "RSA", "-keysize", "2048",
                    "-dname", "CN=" + name, "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
                    "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", "changeit", "-keypass",
                    "changeit"))
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("keytool failed: " + output);
    }
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, "changeit".toCharArray());
    }
    Certificate c = ks.getCertificate(name);
    Key k = ks.getKey(name, "changeit".toCharArray());
    Path certPem = Files.writeString(dir.resolve(name + ".pem"), pem("CERTIFICATE", c.getEncoded()));
    Path keyPem = Files.writeString(dir.resolve(name + "-key.pem"), pem("PRIVATE KEY", k.getEncoded()));
    return new TestCerts(certPem, keyPem);
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
