package io.gospan.offsets.buildinfo;

/**
 * One {@code build} line of Go build info (go1.18+), e.g. {@code -compiler=gc}, {@code GOARCH=amd64}.
 *
 * @param key setting name, unquoted
 * @param value setting value, unquoted
 */
public record BuildSetting(String key, String value) {}
