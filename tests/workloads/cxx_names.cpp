/*
 * cxx_names.cpp - C++ functions whose mangled symbols must be demangled.
 *
 * Ground truth: three hot functions with C++-only names, called in rounds
 * with work in the ratio 1:2:3 (so 1/6, 2/6, 3/6 of the hot time):
 *
 *   shapes::Circle::area_hot(int) const        _ZNK6shapes6Circle8area_hotEi
 *   long shapes::accumulate_hot<long>(long, long)
 *   (anonymous namespace)::Spinner::operator()(unsigned long)
 *
 * Each has distinct parameter types, so the demangled names carry them and
 * differ from the raw ones in every character class (::, <>, ()).
 *
 * usage: cxx_names [SECONDS]     (default: forever)
 */
#include "workload.h"

#define C 100000L

namespace shapes {

struct Circle {
	double r;
	WL_NOINLINE double area_hot(int n) const;
};

double Circle::area_hot(int n) const
{
	WL_SPIN(1 * C * n);
	return r * r * 3.14159;
}

template <typename T>
WL_NOINLINE T accumulate_hot(T x, long n)
{
	WL_SPIN(2 * C * n);
	return x + (T)n;
}

template long accumulate_hot<long>(long, long);

} // namespace shapes

namespace {

struct Spinner {
	WL_NOINLINE void operator()(unsigned long n);
};

void Spinner::operator()(unsigned long n)
{
	WL_SPIN(3 * C * (long)n);
}

} // namespace

int main(int argc, char **argv)
{
	double secs = wl_arg_double(argc, argv, 1, -1.0);
	double end = wl_now() + secs;
	shapes::Circle c{ 2.0 };
	Spinner s;
	long acc = 0;

	for (;;) {
		c.area_hot(1);
		acc = shapes::accumulate_hot<long>(acc, 1);
		s(1);
		if (secs >= 0 && wl_now() >= end)
			break;
	}
	return (int)(acc & 1);
}
