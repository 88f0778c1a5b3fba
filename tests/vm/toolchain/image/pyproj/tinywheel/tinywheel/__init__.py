def greet(name):
    return "wheel says hello to " + name
