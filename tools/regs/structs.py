def generate(files, version, generator, amd, fail):
    return {}
